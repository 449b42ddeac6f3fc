"""Schedules (issue 15, part 5): a suite started again and again on hosts or a label's hosts, by Celery beat."""
