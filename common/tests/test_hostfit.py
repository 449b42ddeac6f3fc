"""A host's inventory against a run's parameters (hostfit.py): an ISA its CPU lacks is refused, naming what it
has; an inventory without ISA flags leaves the decision to the host's kernel."""
from __future__ import annotations

import pytest

from hostbench_common.errors import ParamError
from hostbench_common.experiments import RUNS
from hostbench_common.hostfit import refusal

AVX2_HOST = {"cpu": {"isa": ["sse", "sse2", "avx", "fma", "avx2"]}}
NO_FMA = {"cpu": {"isa": ["sse2", "avx", "avx2"]}}


@pytest.mark.parametrize("kind", ["cpu", "cpu_trace", "memory"])
def test_an_isa_the_cpu_lacks_is_refused_naming_what_it_has(kind):
    op = "copy" if kind == "memory" else "fp64"
    field, why = refusal(RUNS[kind], {"op": op, "isa": "avx512"}, AVX2_HOST, "box-1")
    assert field == "isa"
    assert "avx512f" in why and "box-1" in why
    # the choices are the kernel's: the memory kernel has no SSE2 loops
    assert why.endswith("avx2, scalar" if kind == "memory" else "avx2, sse2, scalar")
    for isa in ("auto", "avx2", "scalar"):
        assert refusal(RUNS[kind], {"op": op, "isa": isa}, AVX2_HOST, "box-1") is None


def test_fp_chains_at_avx2_need_fma_int32_does_not():
    field, why = refusal(RUNS["cpu"], {"op": "fp64", "isa": "avx2"}, NO_FMA, "old")
    assert field == "isa" and "needs fma" in why and "sse2, scalar" in why
    assert refusal(RUNS["cpu"], {"op": "int32", "isa": "avx2"}, NO_FMA, "old") is None


@pytest.mark.parametrize("inventory", [None, {}, {"cpu": {}}, {"cpu": {"isa": []}}, {"cpu": {"isa": "avx2"}},
                                       {"cpu": ["not", "a", "section"]}])
def test_without_isa_flags_the_host_decides(inventory):
    assert refusal(RUNS["cpu"], {"op": "fp64", "isa": "avx512"}, inventory, "h") is None


def test_a_run_kind_without_isa_is_never_refused_for_it():
    assert refusal(RUNS["disk"], {"isa": "avx512"}, AVX2_HOST, "h") is None


L3_32M = {"cpu": {"isa": ["sse2", "avx2", "fma"], "l3_bytes": 32 * 2**20}}


@pytest.mark.parametrize(("params", "field"), [
    ({"op": "copy", "buffer_bytes": 65536, "blocks": [64], "threads": [1]}, "buffer_bytes"),
    ({"op": "stream_triad", "array_size": 4096, "threads": [1]}, "array_size"),
    # the kernel's rule: each thread's region is at least one block, so large blocks make a large working set
    ({"op": "read", "buffer_bytes": 65536, "blocks": [2**28], "threads": [1]}, None),
    ({"op": "copy", "buffer_bytes": 65536, "blocks": [64], "threads": [1], "allow_cache": True}, None),
    ({"op": "copy", "buffer_bytes": 0, "blocks": [64], "threads": [1]}, None),  # 0: the kernel sizes it
    ({"op": "stream_copy", "array_size": 4 * 2**22, "threads": [1]}, None),  # 4 x 32 MiB of doubles exactly
    ({"op": "latency", "buffer_bytes": 65536}, None),
])
def test_a_cache_sized_working_set_needs_allow_cache(params, field):
    found = refusal(RUNS["memory"], params, L3_32M, "h")
    if field is None:
        assert found is None
        return
    assert found is not None and found[0] == field
    assert "allow_cache true" in found[1] and "4 x 33554432 B" in found[1]
    assert refusal(RUNS["memory"], params, {"cpu": {}}, "h") is None  # no L3 in the inventory: the kernel judges


OFFERS_FAST = {"disks": {"targets": [{"name": "fast", "fstype": "xfs", "free_bytes": 10**12}]}}


def test_a_disk_target_must_be_one_the_host_offers():
    assert refusal(RUNS["disk"], {"target": "fast"}, OFFERS_FAST, "h") is None
    assert refusal(RUNS["disk"], {"target": "work"}, {}, "h") is None  # the run's own directory: every runner
    field, why = refusal(RUNS["disk"], {"target": "slow"}, OFFERS_FAST, "box")
    assert field == "target" and "host box offers no disk target of that name; it offers: work, fast" in why
    assert "--disk-target NAME=PATH" in why
    # an inventory that lists none (an older runner, or none configured) offers none
    for inventory in ({}, None, {"disks": {"targets": "fast"}}, {"disks": {"targets": [{"name": 3}]}}):
        assert refusal(RUNS["disk"], {"target": "fast"}, inventory, "h")[0] == "target"


def test_the_target_is_a_name_never_a_path_and_reaches_the_kernel_only_as_the_runner_s_directory():
    run = RUNS["disk"]
    schema = run.kernel_schema()
    for bad in ("/etc", "../x", "Fast", "a b", "x" * 33, ""):
        with pytest.raises(ParamError, match="target"):
            run.kernel_params({"target": bad}, schema)
    assert "workdir" not in run.kernel_params({"target": "fast"}, schema)  # the runner gives it, or the default
    argv = run.argv("hbk", run.kernel_params({"target": "fast"}, schema, workdir="/srv/fast/hostbench-7-1"))
    assert argv[argv.index("--workdir") + 1] == "/srv/fast/hostbench-7-1" and "fast" not in argv
    assert run.api_schema(with_defaults=True)["properties"]["target"]["default"] == "work"
