"""The API's parameter bounds agree with each kernel's own --describe (the runner checks them again)."""
import json
import subprocess
from pathlib import Path

import pytest

from app.experiments.registry import EXPERIMENTS, PARAMS

ROOT = Path(__file__).resolve().parents[2]
HBK = ROOT / "runner" / "kernels" / "build" / "hbk"


def _describe(kernel: str) -> dict:
    out = subprocess.run([str(HBK), kernel, "--describe"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["parameters"]["properties"]


def _bounds(schema: dict) -> tuple:
    items = schema.get("items", schema)
    if "anyOf" in items:  # pydantic's float | int
        items = {k: v for alt in items["anyOf"] for k, v in alt.items()}
    return items.get("minimum"), items.get("maximum"), tuple(sorted(items.get("enum", [])))


@pytest.mark.parametrize("kind", sorted(EXPERIMENTS))
def test_api_bounds_are_within_the_built_kernels(kind):
    """The table may only narrow a kernel's bounds: every API bound is inside the built kernel's own."""
    run = EXPERIMENTS[kind].run
    theirs = _describe(run.kernel)
    ours = PARAMS[kind].model_json_schema()
    defs = ours.get("$defs", {})
    for name, prop in ours["properties"].items():
        if name == "reference" or name in run.runner_params:  # the runner's, no kernel bound
            continue
        p = run.param(name)
        assert p is not None, (kind, name)
        k = theirs[p.target]
        if p.one_of_list:
            k = k["items"]
        if "$ref" in prop:
            prop = defs[prop["$ref"].split("/")[-1]]
        if "items" in prop and "$ref" in prop["items"]:
            prop = {**prop, "items": defs[prop["items"]["$ref"].split("/")[-1]]}
        lo, hi, enum = _bounds(prop)
        klo, khi, kenum = _bounds(k)
        if enum:
            assert set(enum) <= set(kenum), (kind, name)
            continue
        assert klo is None or (lo is not None and lo >= klo), (kind, name, lo, klo)
        assert khi is None or (hi is not None and hi <= khi), (kind, name, hi, khi)


def test_every_experiment_has_a_parameter_schema_for_the_form(client):
    data = client.get("/api/experiments").json()["data"]
    assert [e["kind"] for e in data] == list(EXPERIMENTS)
    for e in data:
        assert set(e["parameters"]["properties"]) == set(PARAMS[e["kind"]].model_fields)
        assert len(e["roles"]) == len(e["run_kinds"]) == EXPERIMENTS[e["kind"]].hosts
    # what result rows' threads and block sizes are, in words, as hostbench_common.axes declares them (issue 32)
    by = {e["kind"]: e for e in data}
    for kind in ("network", "network_pair"):
        assert by[kind]["axes"] == {"count": "stream", "counts": "streams", "size": "message size", "sized": "messages"}
        assert by[kind]["axes_by_op"]["udp_stream"]["size"] == "datagram size"
    assert by["cpu"]["axes"]["counts"] == "threads" and by["cpu"]["axes_by_op"] == {}
    assert by["memory"]["axes_by_op"]["latency"]["size"] == "working set per thread"


@pytest.mark.parametrize("kind", sorted(EXPERIMENTS))
def test_a_byte_size_is_published_by_the_unit_its_kernel_declares(kind):
    """Every parameter the built kernel declares in bytes ("x-unit": "B") is published so, and no other: the form
    types sizes as "8 KiB" by this, never by words in a description (HPL's N says "8 N^2 bytes" and is a count)."""
    run = EXPERIMENTS[kind].run
    theirs = _describe(run.kernel)
    for name, prop in PARAMS[kind].model_json_schema()["properties"].items():
        p = run.param(name)
        declared = theirs[p.target].get("x-unit") if p is not None else None
        assert prop.get("x-unit") == declared, (kind, name)
    sizes = {"memory": {"blocks", "buffer_bytes", "sizes"}, "disk": {"blocks", "file_size"}, "network": {"sizes"},
             "network_pair": {"sizes"}, "gpu": {"bytes"}}.get(kind, set())
    assert {n for n, s in PARAMS[kind].model_json_schema()["properties"].items() if s.get("x-unit") == "B"} == sizes


def test_disk_runs_direct_by_default_and_takes_any_block(client, runner):
    """Device figures by default: direct is true; a block direct I/O cannot move (8 B) is no longer refused by
    the API: the kernel runs that row buffered with the page cache dropped and says so (its io_mode)."""
    host_id, _ = runner
    disk = next(e for e in client.get("/api/experiments").json()["data"] if e["kind"] == "disk")
    assert disk["parameters"]["properties"]["direct"]["default"] is True
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "disk",
                                       "params": {"direct": True, "blocks": [8, 4096], "file_size": 1048576}})
    assert r.status_code in (200, 201), r.text


