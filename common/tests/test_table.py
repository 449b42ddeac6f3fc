"""The experiment table against the kernels' own descriptions (describe.py, which backend/tests/test_kernel_rules.py
keeps equal to the built kernel's): every parameter it names exists, it only ever narrows a kernel's bounds, its
roles name run kinds it declares, and the expected duration follows the published terms."""
from __future__ import annotations

import pytest

from hostbench_common.describe import DESCRIBE
from hostbench_common.errors import ParamError
from hostbench_common.experiments import (
    EXPERIMENTS,
    MEMORY_BLOCK_OPS,
    MEMORY_STREAM_OPS,
    REFERENCE_ALLOWANCE_S,
    ROLE_OF,
    RUNS,
    Param,
    Run,
)


def _bounds(schema: dict) -> tuple:
    s = schema.get("items", schema)
    return s.get("minimum"), s.get("maximum")


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_every_parameter_is_the_kernels_and_only_narrowed(kind):
    run = RUNS[kind]
    props = DESCRIBE[run.kernel]["parameters"]["properties"]
    for name in run.argv_order:
        assert name in props or name == run.deadline_param, (kind, name)
    for p in run.params:
        theirs = props[p.target]
        if p.one_of_list:
            theirs = theirs["items"]
        ours = run.param_schema(p)
        lo, hi = _bounds(ours)
        klo, khi = _bounds(theirs)
        assert klo is None or (lo is not None and lo >= klo), (kind, p.name, lo, klo)
        assert khi is None or (hi is not None and hi <= khi), (kind, p.name, hi, khi)
        if "maxItems" in theirs:
            assert ours.get("maxItems", 10**9) <= theirs["maxItems"], (kind, p.name)
        default = ours.get("default")
        if default is not None and lo is not None and hi is not None:
            for v in default if isinstance(default, list) else [default]:
                assert lo <= v <= hi, (kind, p.name, v)
        enum = ours.get("items", ours).get("enum")
        if enum and run.applies_of(p) is None:
            assert set(enum) <= set(theirs.get("items", theirs).get("enum", enum)), (kind, p.name)


def test_a_narrowing_that_widens_is_caught():
    """The check above can fail: a made-up kind that raises a kernel maximum is reported."""
    wide = Run("wide", "cpu", (Param("repeats", narrow={"maximum": 10**6}),))
    ours = wide.param_schema(wide.params[0])
    assert _bounds(ours)[1] > _bounds(DESCRIBE["cpu"]["parameters"]["properties"]["repeats"])[1]


def test_roles_name_declared_run_kinds_and_two_hosts_is_a_capability():
    for e in EXPERIMENTS.values():
        assert e.params_of in {k for _, k in e.roles}
        for role, kind in e.roles:
            assert kind in RUNS and ROLE_OF[kind] == role
    pairs = [e for e in EXPERIMENTS.values() if e.hosts == 2]
    assert pairs and all([r for r, _ in e.roles] == ["serve", "drive"] for e in pairs)
    # the server fills a driving run's peer and port: never a person's parameter
    for e in pairs:
        assert {"peer", "port"} <= {p.name for p in e.run.params}
        assert not {"peer", "port"} & set(e.api_schema()["properties"])


def test_applies_names_values_the_kernel_takes():
    for e in EXPERIMENTS.values():
        for name, cond in e.applies().items():
            for other, values in cond.items():
                enum = e.run.param_schema(e.run.param(other)).get("enum")  # the value of one run
                assert enum and set(values) <= set(enum), (e.kind, name, other)


def test_expected_duration_follows_the_terms():
    cpu, trace, mem = EXPERIMENTS["cpu"], EXPERIMENTS["cpu_trace"], EXPERIMENTS["memory"]
    # 4 thread counts x (warm-up 1 s + 3 repeats x 5 s)
    assert cpu.expected_duration({}) == 4 * (1 + 3 * 5)
    # repeat-until-stable: the worst case, max_repeats
    assert cpu.expected_duration({"threads": [1], "repeats": 3, "stable_cv": 0.03, "max_repeats": 7}) == 1 + 7 * 5
    # a trace is one phase: its repeats and warm-up are pinned (1, 0)
    assert trace.expected_duration({"duration_s": 600}) == 600
    assert trace.terms()["fixed"] == {"repeats": 1, "warmup_s": 0}
    # memory: blocks count for block ops, sizes for latency, neither for STREAM
    base = {"threads": [1, 2], "repeats": 1, "duration_s": 2, "warmup_s": 0, "blocks": [8, 64, 512],
            "sizes": [4096, 8192]}
    assert mem.expected_duration({**base, "op": "copy"}) == 3 * 2 * 2
    assert mem.expected_duration({**base, "op": "latency"}) == 2 * 2 * 2
    assert mem.expected_duration({**base, "op": "stream_triad"}) == 2 * 2
    assert cpu.reference_allowance({"reference": True, "threads": [1, 2]}) == 2 * REFERENCE_ALLOWANCE_S
    assert cpu.reference_allowance({"reference": False, "threads": [1, 2]}) == 0


def test_which_op_a_parameter_applies_to_is_the_kernels_declaration():
    """One definition: the memory kernel's x-applies (its parameter table), read by the runner, the API's refusal,
    the form's `applies` and what a run stores."""
    props = DESCRIBE["memory"]["parameters"]["properties"]
    declared = {name: prop["x-applies"] for name, prop in props.items() if "x-applies" in prop}
    assert EXPERIMENTS["memory"].applies() == {k: v for k, v in declared.items() if RUNS["memory"].param(k)}
    assert set(EXPERIMENTS["memory"].applies()) == {"blocks", "buffer_bytes", "array_size", "allow_cache", "sizes"}
    # a run stores only what applies to it: a read has blocks, no working-set sizes; a STREAM op neither
    run = RUNS["memory"]
    full = {**run.defaults(), "threads": [1]}
    assert {"blocks", "buffer_bytes", "allow_cache"} <= set(run.applying({**full, "op": "read"}))
    assert not {"sizes", "array_size"} & set(run.applying({**full, "op": "read"}))
    assert not {"blocks", "sizes", "buffer_bytes"} & set(run.applying({**full, "op": "stream_triad"}))
    assert RUNS["cpu"].applying({"op": "fp64", "threads": [1]}) == {"op": "fp64", "threads": [1]}  # none declared


def test_the_runner_drops_what_does_not_apply():
    run = RUNS["memory"]
    schema = run.kernel_schema()
    latency = run.kernel_params({"op": "latency", "sizes": [4096], "threads": [1]}, schema)
    assert "sizes" in latency and "blocks" not in latency
    stream = run.kernel_params({"op": "stream_copy", "threads": [1]}, schema)
    assert "sizes" not in stream and "blocks" not in stream
    with pytest.raises(ParamError, match="multiple of 8"):
        run.kernel_params({"op": "copy", "blocks": [12]}, schema)


@pytest.mark.parametrize("kind", ["cpu", "cpu_trace", "memory"])
def test_a_job_picks_the_isa_and_the_kernel_gets_it(kind):
    run = RUNS[kind]
    schema = run.kernel_schema()
    op = "copy" if kind == "memory" else "fp64"
    threads = 1 if kind == "cpu_trace" else [1]
    argv = run.argv("hbk", run.kernel_params({"op": op, "isa": "avx2", "threads": threads}, schema))
    assert argv[argv.index("--isa") + 1] == "avx2"
    assert run.defaults()["isa"] == "auto"
    with pytest.raises(ParamError, match="isa"):
        run.kernel_params({"op": op, "isa": "avx1024"}, schema)


def test_cache_resident_options_reach_only_the_ops_they_apply_to():
    """The kernel refuses --buffer_bytes, --array_size or --allow_cache given to an op they do not apply to."""
    run = RUNS["memory"]
    schema = run.kernel_schema()
    block = run.kernel_params({"op": "copy", "buffer_bytes": 65536, "allow_cache": True, "array_size": 4096},
                              schema)
    assert block["buffer_bytes"] == 65536 and block["allow_cache"] is True and "array_size" not in block
    stream = run.kernel_params({"op": "stream_triad_nt", "array_size": 4096, "allow_cache": True}, schema)
    assert stream["array_size"] == 4096 and "buffer_bytes" not in stream
    latency = run.kernel_params({"op": "latency", "allow_cache": True, "buffer_bytes": 65536}, schema)
    assert not {"allow_cache", "buffer_bytes", "array_size"} & set(latency)
    assert EXPERIMENTS["memory"].applies()["array_size"] == {"op": list(MEMORY_STREAM_OPS)}
    assert set(MEMORY_STREAM_OPS) | set(MEMORY_BLOCK_OPS) | {"latency"} == set(
        run.param_schema(run.param("op"))["enum"])
