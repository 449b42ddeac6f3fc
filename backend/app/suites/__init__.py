"""Suites (issue 15): the built-in suites of hostbench_common.suites started on hosts as one unit (a SuiteRun
grouping its jobs), with progress, expected duration and cancel."""
