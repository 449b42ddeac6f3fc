"""The real `hbk` (runner/kernels/build/hbk) through the daemon; skipped until it is built."""

from __future__ import annotations

import time

import pytest
from hostbench_common.experiments import RUNS
from runner_fakes import DESCRIBE, assignment, run_once

from hostbench_runner.config import SOURCE_KERNEL_BIN
from hostbench_runner.kernel import KernelCatalog

pytestmark = pytest.mark.skipif(not SOURCE_KERNEL_BIN.is_file(), reason="runner/kernels/build/hbk not built")


def test_fixture_schema_matches_the_real_kernel_for_the_parameters_we_pass():
    real = KernelCatalog(SOURCE_KERNEL_BIN).schema("cpu")["properties"]
    ours = DESCRIBE["parameters"]["properties"]
    for exp in RUNS.values():
        if exp.kernel != "cpu":
            continue
        for name in exp.argv_order:
            for key in ("type", "minimum", "maximum", "enum", "items", "minItems", "uniqueItems"):
                assert real[name].get(key) == ours[name].get(key), (name, key)


def test_real_cpu_kernel_run_succeeds(server, settings_for):
    params = {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 0.2, "warmup_s": 0}
    _, finish = run_once(server, settings_for(server.url, SOURCE_KERNEL_BIN), assignment(run_id=70, params=params))
    assert finish["status"] == "succeeded", finish["reason"]
    assert finish["end"]["status"] == "ok" and finish["results"][0]["verified"] is True
    assert server.starts[0][1]["kernel_info"]["kernel"] == "cpu"


def test_real_cpu_kernel_is_stopped_at_the_deadline(server, settings_for):
    params = {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 30, "warmup_s": 0}
    started = time.monotonic()
    _, finish = run_once(server, settings_for(server.url, SOURCE_KERNEL_BIN),
                         assignment(run_id=71, params=params, deadline_s=1))
    assert finish["status"] == "failed" and finish["reason"] == "deadline exceeded (1 s)"
    assert time.monotonic() - started < 15  # the kernel was asked for 30 s
