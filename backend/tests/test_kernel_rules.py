"""Issue 14: the API accepts exactly what the kernels accept. Every experiment's defaults and its documented edge
values (bounds, the UDP size limit ±1, busy poll with each op, repeats against max_repeats with stable_cv) go through
the API; each accepted job's runs become the runner's real argv (hostbench_common.experiments) and the real kernel's
`--check` takes them (exit 0); each refused one is a 422 naming the field, and where a kernel rule refused it, the
runner and the kernel refuse the same parameters with the same message. The API reads the rules from a describe
snapshot that must equal the built kernel's --describe."""
import copy
import itertools
import json
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hostbench_common.describe import DESCRIBE
from hostbench_common.errors import ParamError
from hostbench_common.experiments import EXPERIMENTS, ROLE_OF, kernels_needed
from hostbench_common.experiments import RUNS as RUNNER_EXPERIMENTS
from hostbench_common.snapshot import describe
from hostbench_runner.kernel import KernelCatalog

from app.experiments import registry
from tests.conftest import ZEN4_INVENTORY

ROOT = Path(__file__).resolve().parents[2]
HBK = ROOT / "runner" / "kernels" / "build" / "hbk"
MODELS = registry.PARAMS


def schema(kernel: str) -> dict:
    return DESCRIBE[kernel]["parameters"]
# a short job, so that a bound under test is what decides, never the cap on a job's duration
SHORT = {"repeats": 1, "duration_s": 0.2, "warmup_s": 0}
CPU_SHORT = {**SHORT, "threads": [1]}
NET_SHORT = {**SHORT, "sizes": [1024], "streams": [1]}


@pytest.fixture(scope="module")
def catalog() -> KernelCatalog:
    if not HBK.is_file():
        pytest.fail(f"kernel not built ({HBK}): ./hostbench test builds it before the backend suite")
    return KernelCatalog(HBK)


def _without_arch(doc: dict) -> dict:
    """The cpu kernel's isa choices are those of the architecture it was built for (the snapshot's: x86-64)."""
    doc = copy.deepcopy(doc)
    isa = doc.get("parameters", {}).get("properties", {}).get("isa")
    if isa is not None:
        isa.pop("enum", None)
    return doc


@pytest.mark.parametrize("kernel", kernels_needed())
def test_describe_snapshot_is_the_built_kernels(catalog, kernel):
    built = describe(HBK, kernel)
    snap = DESCRIBE[kernel]
    if platform.machine() not in ("x86_64", "AMD64"):
        built, snap = _without_arch(built), _without_arch(snap)
    assert built == snap, "the kernel changed: python -m hostbench_common.snapshot rewrites the copy"


def test_cpu_trace_bounds_are_within_the_kernel():
    props = DESCRIBE["cpu"]["parameters"]["properties"]
    ours = registry.PARAMS["cpu_trace"].model_json_schema()["properties"]
    assert ours["duration_s"]["maximum"] <= props["duration_s"]["maximum"]
    assert ours["duration_s"]["minimum"] >= props["duration_s"]["minimum"]


def _register(client, session, name: str) -> int:
    from app.hosts.service import create_registration_token

    token, _ = create_registration_token(session)
    r = client.post("/api/runners/register", json={
        "registration_token": token, "name": name, "hostname": f"{name}.local", "version": "0",
        "inventory": ZEN4_INVENTORY, "labels": {}})
    assert r.status_code == 201, r.text
    return r.json()["host_id"]


_names = itertools.count()


def _submit(client, session, experiment: str, params: dict):
    hosts = [_register(client, session, f"host-{next(_names)}") for _ in range(EXPERIMENTS[experiment].hosts)]
    return client.post("/api/jobs", json={"host_ids": hosts, "experiment": experiment, "params": params})


def _with_check(argv: list[str]) -> list[str]:
    return [*argv[:2], "--check", *argv[2:]]


def _kernel(argv: list[str]) -> tuple[int, list[dict]]:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return p.returncode, [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def _run_params(run: dict) -> dict:
    """What the runner receives for a run: a driver also gets its server's address and port."""
    params = dict(run["params"])
    if ROLE_OF[run["experiment"]] == "drive":
        params.update(peer="127.0.0.1", port=5201)
    return params


def _runs_as_stored(experiment: str, params: dict) -> list[tuple[str, dict]]:
    """The runs a job with these params would have, built without the rules (for params the API refused)."""
    stored = MODELS[experiment].model_construct(**params).model_dump(mode="json")
    e = EXPERIMENTS[experiment]
    if e.hosts == 1:
        return [(experiment, stored)]
    return [(e.run_kind("serve"), {"op": stored["op"]}),
            (e.run_kind("drive"), {**stored, "server_run_id": 1, "peer": "127.0.0.1", "port": 5201})]


def _no_rules(s: dict) -> dict:
    return {k: v for k, v in s.items() if k != "x-rules"}


RULE = "rule:"  # a refusal by one of the kernel's rules (x-rules), not by a bound
# (experiment, params, the field a refusal names, or None: accepted)
CASES: list[tuple[str, dict[str, Any], str | None]] = [
    *[(kind, {}, None) for kind in EXPERIMENTS],
    # cpu: bounds, and repeats against max_repeats with stable_cv
    ("cpu", {**CPU_SHORT, "threads": [256]}, None),
    ("cpu", {**CPU_SHORT, "threads": [257]}, "threads"),
    ("cpu", {**CPU_SHORT, "repeats": 100}, None),
    ("cpu", {**CPU_SHORT, "repeats": 101}, "repeats"),
    ("cpu", {**CPU_SHORT, "duration_s": 3600}, None),
    ("cpu", {**CPU_SHORT, "duration_s": 0.19}, "duration_s"),
    ("cpu", {**CPU_SHORT, "warmup_s": 600}, None),
    ("cpu", {**CPU_SHORT, "stable_cv": 0.5, "max_repeats": 1000}, None),
    ("cpu", {**CPU_SHORT, "stable_cv": 0.51}, "stable_cv"),
    ("cpu", {**CPU_SHORT, "repeats": 5, "stable_cv": 0.035, "max_repeats": 4}, RULE + "max_repeats"),
    ("cpu", {**CPU_SHORT, "repeats": 5, "stable_cv": 0.035, "max_repeats": 5}, None),
    ("cpu", {**CPU_SHORT, "repeats": 5, "stable_cv": 0, "max_repeats": 1}, None),  # a cap only when stable_cv > 0
    *[("cpu", {**CPU_SHORT, "op": op}, None) for op in ("fp64", "fp32", "int32")],
    # isa: the ones every x86-64 CPU has (the registered host's inventory lists AVX-512 too), and no other word
    *[("cpu", {**CPU_SHORT, "op": op, "isa": isa}, None) for op in ("fp64", "int32") for isa in ("sse2", "scalar")],
    ("cpu", {**CPU_SHORT, "isa": "neon"}, "isa"),
    # hpl_n: the reference HPL's N, the runner's (never the kernel's); 0 sizes it from our figure
    ("cpu", {**CPU_SHORT, "hpl_n": 20000}, None),
    ("cpu", {**CPU_SHORT, "hpl_n": 20001}, "hpl_n"),
    ("cpu", {**CPU_SHORT, "hpl_n": -1}, "hpl_n"),
    ("cpu_trace", {"threads": 1, "duration_s": 1, "isa": "scalar"}, None),
    ("memory", {**CPU_SHORT, "isa": "scalar"}, None),
    ("memory", {**CPU_SHORT, "isa": "sse2"}, "isa"),  # the memory kernel has no SSE2 loops
    # cache-resident runs: each option only for the ops it applies to (the kernel refuses it for others)
    ("memory", {**CPU_SHORT, "op": "copy", "blocks": [64], "buffer_bytes": 65536, "allow_cache": True}, None),
    ("memory", {**CPU_SHORT, "op": "read", "buffer_bytes": 8589934592}, None),
    ("memory", {**CPU_SHORT, "op": "read", "buffer_bytes": 8589934593}, "buffer_bytes"),
    ("memory", {**CPU_SHORT, "op": "stream_triad", "array_size": 4096, "allow_cache": True}, None),
    ("memory", {**CPU_SHORT, "op": "stream_copy", "array_size": 536870913}, "array_size"),
    # a parameter no op of the job uses is refused by the API (issue 32), though the kernel would ignore it
    ("memory", {**CPU_SHORT, "op": "latency", "buffer_bytes": 65536}, "buffer_bytes"),
    ("memory", {**CPU_SHORT, "op": "latency", "allow_cache": True}, "allow_cache"),
    # cpu_trace: the thread count and the trace's length up to the cap on a job's duration (12 h)
    ("cpu_trace", {"threads": 256, "duration_s": 1}, None),
    ("cpu_trace", {"threads": 1, "duration_s": 3600}, None),
    ("cpu_trace", {"threads": 1, "duration_s": 43200}, None),
    ("cpu_trace", {"threads": 1, "duration_s": 86400}, "duration_s"),
    ("cpu_trace", {"threads": 1, "duration_s": 0.5}, "duration_s"),
    # memory: every op family, the smallest and largest blocks and working sets
    *[("memory", {**CPU_SHORT, "op": op}, None) for op in ("copy", "rand_write", "stream_triad_nt", "latency")],
    ("memory", {**CPU_SHORT, "blocks": [8, 1073741824]}, None),
    ("memory", {**CPU_SHORT, "blocks": [12]}, "blocks"),
    ("memory", {**CPU_SHORT, "op": "latency", "sizes": [4096, 1073741824]}, None),
    ("memory", {**CPU_SHORT, "op": "latency", "repeats": 3, "stable_cv": 0.1, "max_repeats": 2}, RULE + "max_repeats"),
    # disk: file size (a multiple of 4096, at least the largest block), blocks, depth
    ("disk", {**CPU_SHORT, "ops": ["seq_read"], "blocks": [1, 83886080]}, None),
    ("disk", {**CPU_SHORT, "file_size": 1048576, "blocks": [4096, 1048576]}, None),
    ("disk", {**CPU_SHORT, "file_size": 1048576}, RULE + "blocks"),  # the default blocks go up to 80 MiB
    ("disk", {**CPU_SHORT, "file_size": 68719476736}, None),
    ("disk", {**CPU_SHORT, "file_size": 1050000}, RULE + "file_size"),
    ("disk", {**CPU_SHORT, "file_size": 1048575}, "file_size"),
    ("disk", {**CPU_SHORT, "iodepth": 256, "blocks": [4096]}, None),
    ("disk", {**CPU_SHORT, "direct": True, "blocks": [512, 4096]}, None),
    ("disk", {**CPU_SHORT, "direct": True, "blocks": [8, 4096]}, None),  # the 8-B row runs cache_dropped
    # the target is a name the host's runner offers ("work": the run's own directory), never a path
    ("disk", {**CPU_SHORT, "blocks": [4096], "target": "work"}, None),
    ("disk", {**CPU_SHORT, "blocks": [4096], "target": "/etc"}, "target"),
    ("disk", {**CPU_SHORT, "blocks": [4096], "target": "nvme0"}, "target"),  # the host offers none
    # network: the UDP size limit +-1 for each UDP op, busy poll with each op, streams, repeats
    ("network", {**NET_SHORT, "op": "udp_stream"}, None),  # no sizes: the default is brought to 65507
    ("network", {**NET_SHORT, "op": "udp_stream", "sizes": [1, 65507]}, None),
    ("network", {**NET_SHORT, "op": "udp_stream", "sizes": [1, 65508]}, RULE + "sizes"),
    ("network", {**NET_SHORT, "op": "udp_rr", "sizes": [65507]}, None),
    ("network", {**NET_SHORT, "op": "udp_rr", "sizes": [65508]}, RULE + "sizes"),
    ("network", {**NET_SHORT, "op": "tcp_stream", "sizes": [65508, 4194304]}, None),
    ("network", {**NET_SHORT, "op": "tcp_rr", "sizes": [4194305]}, "sizes"),
    ("network", {**NET_SHORT, "op": "tcp_rr", "poll": "busy"}, None),
    ("network", {**NET_SHORT, "op": "udp_rr", "poll": "busy"}, None),
    ("network", {**NET_SHORT, "op": "tcp_stream", "poll": "busy"}, RULE + "poll"),
    ("network", {**NET_SHORT, "op": "udp_stream", "poll": "busy"}, RULE + "poll"),
    ("network", {**NET_SHORT, "streams": [1, 8]}, None),
    ("network", {**NET_SHORT, "streams": [9]}, "streams"),
    ("network", {**NET_SHORT, "repeats": 3, "stable_cv": 0.1, "max_repeats": 2}, RULE + "max_repeats"),
    ("network", {**NET_SHORT, "repeats": 3, "stable_cv": 0.1, "max_repeats": 3}, None),
    ("network_pair", {**NET_SHORT, "op": "udp_stream"}, None),
    ("network_pair", {**NET_SHORT, "op": "udp_rr", "sizes": [65507]}, None),
    ("network_pair", {**NET_SHORT, "op": "udp_rr", "sizes": [65508]}, RULE + "sizes"),
    ("network_pair", {**NET_SHORT, "op": "tcp_rr", "poll": "busy"}, None),
    ("network_pair", {**NET_SHORT, "op": "udp_rr", "poll": "busy"}, None),
    ("network_pair", {**NET_SHORT, "op": "tcp_stream", "poll": "busy"}, RULE + "poll"),
    ("network_pair", {**NET_SHORT, "op": "udp_stream", "poll": "busy"}, RULE + "poll"),
    # gpu: device index and buffer size bounds, each op
    ("gpu", {**SHORT, "device": 15, "bytes": 10**12}, None),
    ("gpu", {**SHORT, "device": 16}, "device"),
    *[("gpu", {**SHORT, "ops": [op]}, None) for op in ("fp32_fma", "fp64_fma", "int32", "dram_bw", "h2d", "d2h")],
]


def _case_id(case: tuple) -> str:
    experiment, params, field = case
    return f"{experiment}-{json.dumps(params, separators=(',', ':'))}-{field or 'ok'}"


@pytest.mark.parametrize(("experiment", "params", "field"), CASES, ids=[_case_id(c) for c in CASES])
def test_the_api_accepts_what_the_kernel_accepts(client, session, catalog, experiment, params, field):
    r = _submit(client, session, experiment, params)
    if field is None:
        assert r.status_code == 201, r.text
        for run in r.json()["runs"]:
            exp = RUNNER_EXPERIMENTS[run["experiment"]]
            kernel_params = exp.kernel_params(_run_params(run), catalog.schema(exp.kernel),
                                              deadline_s=run["expected_duration_s"])
            rc, lines = _kernel(_with_check(exp.argv(HBK, kernel_params)))
            assert rc == 0 and lines and lines[-1]["type"] == "check", (run["experiment"], kernel_params, lines)
        return
    assert r.status_code == 422, r.text
    by_rule = field.startswith(RULE)
    field = field.removeprefix(RULE)
    detail = r.json()["detail"]
    named = [d for d in detail if "params" in d["loc"] and d["loc"][d["loc"].index("params") + 1:][:1] == [field]]
    assert named, detail
    rule_errors = [d for d in named if d["type"] == "kernel_rule"]
    assert bool(rule_errors) == by_rule, detail
    for d in rule_errors:  # a kernel rule refused it: so do the runner and the kernel, in the same words
        for kind, run_params in _runs_as_stored(experiment, params):
            exp = RUNNER_EXPERIMENTS[kind]
            real = catalog.schema(exp.kernel)
            try:
                exp.kernel_params(run_params, real, deadline_s=60)
            except ParamError as exc:
                assert str(exc) == d["msg"]
            else:
                assert ROLE_OF[kind] == "serve", (kind, run_params)  # the serving side measures nothing
                continue
            rc, lines = _kernel(_with_check(exp.argv(HBK, exp.kernel_params(run_params, _no_rules(real),
                                                                                  deadline_s=60))))
            # the kernel, told --role, names it too; a person's words leave out what the run kind pins (issue 32)
            said = re.sub(r" and role is \w+", "", lines[-1]["message"])
            assert rc == 2 and lines[-1]["code"] == "bad_param" and said == d["msg"], lines


def test_a_udp_job_without_sizes_gets_sizes_one_datagram_holds(client, session):
    r = _submit(client, session, "network", {"op": "udp_stream"})
    assert r.status_code == 201, r.text
    assert r.json()["runs"][0]["params"]["sizes"] == [1, 1024, 65507]
    r = _submit(client, session, "network", {"op": "tcp_stream"})
    assert r.json()["runs"][0]["params"]["sizes"] == [1, 1024, 65536]  # TCP keeps the 64 KiB default


def test_a_rule_refusal_names_the_field_and_says_why(client, session):
    r = _submit(client, session, "network", {"op": "udp_stream", "sizes": [1, 65536]})
    assert r.status_code == 422
    [d] = r.json()["detail"]
    assert d["loc"][-2:] == ["params", "sizes"] and d["type"] == "kernel_rule"
    # issue 32: in a person's words: the role the experiment pins (loopback) is no condition of theirs
    assert d["msg"] == ("sizes: 65536 is larger than 65507 when op is udp_stream; one UDP "
                        "datagram carries at most 65507 bytes of payload; give sizes up to 65507 for UDP")
    r = _submit(client, session, "cpu", {"repeats": 5, "stable_cv": 0.1, "max_repeats": 3})
    [d] = r.json()["detail"]
    assert d["loc"][-2:] == ["params", "max_repeats"]
    assert d["msg"].startswith("max_repeats: 3 is below repeats 5 when stable_cv > 0; ")


def test_the_rules_come_from_the_kernel_description():
    rules = schema("net")["x-rules"]
    assert {r["param"] for r in rules} >= {"sizes", "poll"}
    assert {r["param"] for r in schema("cpu")["x-rules"]} >= {"max_repeats"}
