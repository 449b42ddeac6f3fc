"""Issue 15, part 3: options a job sets that a picked host must have. An ISA its CPU lacks (by its inventory's ISA
flags) is a 422 naming isa and what the host has, before anything is queued; a forced ISA's run is set against
that ISA's peak, not the widest one's."""
import itertools
from typing import Any

import pytest

from app.results.service import compute_result
from tests.conftest import ZEN4_INVENTORY

AVX2_ONLY = {**ZEN4_INVENTORY, "cpu": {**ZEN4_INVENTORY["cpu"], "isa": ["sse2", "avx", "fma", "avx2"],
                                       "best_isa": "avx2"}}
NO_FMA = {**AVX2_ONLY, "cpu": {**AVX2_ONLY["cpu"], "isa": ["sse2", "avx", "avx2"]}}
_names = itertools.count()


def _host(client, session, inventory: dict[str, Any]) -> tuple[int, str]:
    from app.hosts.service import create_registration_token

    token, _ = create_registration_token(session)
    name = f"isa-host-{next(_names)}"
    r = client.post("/api/runners/register", json={
        "registration_token": token, "name": name, "hostname": f"{name}.local", "version": "0",
        "inventory": inventory, "labels": {}})
    assert r.status_code == 201, r.text
    return r.json()["host_id"], name


def _job(client, host_id: int, experiment: str, params: dict[str, Any]):
    return client.post("/api/jobs", json={"host_ids": [host_id], "experiment": experiment, "params": params})


@pytest.mark.parametrize(("inventory", "experiment", "params", "has"), [
    (AVX2_ONLY, "cpu", {"op": "fp64", "isa": "avx512"}, "avx2, sse2, scalar"),
    (AVX2_ONLY, "cpu_trace", {"op": "fp32", "isa": "avx512", "threads": 1, "duration_s": 60}, "avx2, sse2, scalar"),
    (AVX2_ONLY, "memory", {"op": "copy", "isa": "avx512"}, "avx2, scalar"),
    # a list of ops: each run is judged; fp64 at AVX2 needs FMA, which this host's flags lack
    (NO_FMA, "cpu", {"op": ["int32", "fp64"], "isa": "avx2"}, "sse2, scalar"),
])
def test_an_isa_the_host_lacks_is_a_422_naming_it_and_what_the_host_has(client, session, inventory, experiment,
                                                                        params, has):
    host_id, name = _host(client, session, inventory)
    r = _job(client, host_id, experiment, params)
    assert r.status_code == 422, r.text
    [d] = r.json()["detail"]
    assert d["loc"] == ["body", "params", "isa"] and d["type"] == "host_lacks"
    assert f"isa {params['isa']} needs" in d["msg"] and name in d["msg"] and d["msg"].endswith(has)


def test_every_picked_host_is_judged(client, session):
    good, _ = _host(client, session, ZEN4_INVENTORY)
    bad, name = _host(client, session, AVX2_ONLY)
    r = client.post("/api/jobs", json={"host_ids": [good, bad], "experiment": "cpu", "params": {"isa": "avx512"}})
    assert r.status_code == 422 and name in r.json()["detail"][0]["msg"]


def test_an_isa_the_host_has_or_an_unlisted_one_is_taken(client, session):
    host_id, _ = _host(client, session, NO_FMA)
    r = _job(client, host_id, "cpu", {"op": "int32", "isa": "avx2", "threads": [1]})
    assert r.status_code == 201, r.text
    assert r.json()["runs"][0]["params"]["isa"] == "avx2"
    assert _job(client, host_id, "memory", {"op": "copy", "isa": "scalar", "threads": [1]}).status_code == 201
    # an inventory without ISA flags: the kernel on the host decides (it ends with error code unsupported)
    blind, _ = _host(client, session, {"cpu": {"vendor": "GenuineIntel"}})
    assert _job(client, blind, "cpu", {"isa": "avx512", "threads": [1]}).status_code == 201


def test_an_unknown_isa_is_a_422_from_the_kernels_choices(client, session):
    host_id, _ = _host(client, session, ZEN4_INVENTORY)
    r = _job(client, host_id, "cpu", {"isa": "avx1024"})
    assert r.status_code == 422
    assert any(d["loc"][-1] == "isa" for d in r.json()["detail"])


ZEN5 = {"cpu": {"vendor": "AuthenticAMD", "family": 26, "model_number": 2, "sockets": 1, "cores_per_socket": 2,
                "isa": ["sse2", "avx", "fma", "avx2", "avx512f"], "best_isa": "avx512"}}


@pytest.mark.parametrize(("isa", "flop_per_cycle"), [("auto", 32), ("avx512", 32), ("avx2", 16), ("sse2", 4)])
def test_a_forced_isa_is_set_against_that_isa_s_peak(isa, flop_per_cycle):
    """Zen 5: two 512-bit FMA pipes. At AVX2 half the lanes; SSE2 runs mul + add, no FMA (2 lanes x 2)."""
    info = {"clock_ghz": 4.0}  # a start line without "isa": the run's param is what says which
    raw = [{"op": "fp64", "threads": 1, "repeat": 1, "value": 10.0, "unit": "GFLOP/s", "verified": True}]
    row = compute_result("cpu", {"op": "fp64", "isa": isa}, raw, info, ZEN5).rows[0]
    assert row.peak.value == pytest.approx(flop_per_cycle * 4.0)
    assert f"{isa if isa != 'auto' else 'avx512'}" in row.peak.formula
    # the kernel's own start line agrees with a forced ISA; for auto it says which it took
    row = compute_result("cpu", {"op": "fp64", "isa": "auto"}, raw, {**info, "isa": "avx2"}, ZEN5).rows[0]
    assert row.peak.value == pytest.approx(16 * 4.0)


L3_HOST = {**ZEN4_INVENTORY, "cpu": {**ZEN4_INVENTORY["cpu"], "l1d_bytes": 32768, "l2_bytes": 1048576,
                                     "l3_bytes": 32 * 2**20}}


def test_a_cache_resident_memory_run_needs_allow_cache_and_reaches_the_kernel(client, session):
    host_id, name = _host(client, session, L3_HOST)
    small = {"op": "copy", "buffer_bytes": 65536, "blocks": [64], "threads": [1]}
    r = _job(client, host_id, "memory", small)
    assert r.status_code == 422, r.text
    [d] = r.json()["detail"]
    assert d["loc"] == ["body", "params", "buffer_bytes"] and d["type"] == "host_lacks"
    assert name in d["msg"] and "allow_cache true" in d["msg"]
    r = _job(client, host_id, "memory", {**small, "allow_cache": True})
    assert r.status_code == 201, r.text
    assert r.json()["runs"][0]["params"]["buffer_bytes"] == 65536
    r = _job(client, host_id, "memory", {"op": "stream_add", "array_size": 4096, "threads": [1]})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "array_size"


def test_a_memory_result_says_each_row_s_level_and_the_host_s_caches():
    raw = [{"op": "read", "threads": 1, "repeat": 1, "value": v, "unit": "MB/s", "verified": True, "block_bytes": b,
            "level": level, "working_set_bytes": 65536}
           for b, v, level in ((64, 90000.0, "L1"), (4096, 60000.0, "L2"), (8192, 1.0, "L9"))]
    result = compute_result("memory", {"op": "read"}, raw, {}, L3_HOST)
    assert [row.level for row in result.rows] == ["L1", "L2", None]  # a word the kernel does not use: none
    assert result.caches == {"L1d": 32768, "L2": 1048576, "L3": 32 * 2**20}
    assert compute_result("memory", {"op": "read"}, raw, {}, ZEN4_INVENTORY).caches == {}  # not in the inventory
    cpu = [{"op": "fp64", "threads": 1, "repeat": 1, "value": 1.0, "unit": "GFLOP/s", "verified": True}]
    assert compute_result("cpu", {"op": "fp64"}, cpu, {}, L3_HOST).caches is None  # memory runs only


OFFERS = {**ZEN4_INVENTORY, "disks": {"targets": [{"name": "nvme0", "fstype": "xfs", "device": "nvme0n1",
                                                   "free_bytes": 10**12}]}}


def test_a_disk_job_names_a_target_the_host_offers_never_a_path(client, session):
    host_id, name = _host(client, session, OFFERS)
    short = {"ops": ["seq_read"], "blocks": [4096], "threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}
    r = _job(client, host_id, "disk", {**short, "target": "nvme0"})
    assert r.status_code == 201, r.text
    assert r.json()["runs"][0]["params"]["target"] == "nvme0"
    assert _job(client, host_id, "disk", short).json()["runs"][0]["params"]["target"] == "work"
    r = _job(client, host_id, "disk", {**short, "target": "sata1"})
    assert r.status_code == 422
    [d] = r.json()["detail"]
    assert d["loc"] == ["body", "params", "target"] and d["type"] == "host_lacks"
    assert d["msg"].startswith(f"target sata1: host {name} offers no disk target of that name; it offers: work, "
                               "nvme0")
    for path in ("/etc", "../../tmp", "nvme0/../x"):
        r = _job(client, host_id, "disk", {**short, "target": path})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "target", r.text


def test_a_gpu_job_on_a_host_whose_inventory_lists_no_gpu_is_refused_naming_the_host(client, session):
    """Issue 32: a GPU job on a host without a GPU was accepted (and failed on the host). Its runner's inventory
    lists the GPUs the CUDA kernel can use (inventory/gpus.py): none is a 422 on host_ids, before anything is
    queued; a device number past the host's GPUs names device; an inventory that does not say is left to the
    kernel."""
    short = {"ops": ["fp32_fma"], "repeats": 1, "duration_s": 1, "warmup_s": 0}
    none, name = _host(client, session, {**ZEN4_INVENTORY, "gpus": []})
    r = _job(client, none, "gpu", short)
    assert r.status_code == 422, r.text
    [d] = r.json()["detail"]
    assert d["loc"] == ["body", "host_ids", 0] and d["type"] == "host_lacks"
    assert d["msg"] == f"host {name} has no GPU: its inventory lists no NVIDIA GPU the CUDA kernel could use; " \
                       "pick a host with one"
    one, name = _host(client, session, {**ZEN4_INVENTORY, "gpus": [{"pci": "0000:18:00.0", "vendor": "nvidia",
                                                                    "device_id": "0x2335", "model": "NVIDIA H200"}]})
    assert _job(client, one, "gpu", short).status_code == 201
    r = _job(client, one, "gpu", {**short, "device": 1})
    assert r.status_code == 422
    [d] = r.json()["detail"]
    assert d["loc"] == ["body", "params", "device"] and d["msg"] == f"device 1: host {name} has 1 GPU (devices 0 to 0)"
    # the second host of a list is judged too; a CPU job on the host without a GPU is fine
    r = client.post("/api/jobs", json={"host_ids": [one, none], "experiment": "gpu", "params": short})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "host_ids", 1]
    assert _job(client, none, "cpu", {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 0.5}).status_code == 201
    unknown, _ = _host(client, session, ZEN4_INVENTORY)  # a runner from before: its inventory does not say
    assert "gpus" not in ZEN4_INVENTORY and _job(client, unknown, "gpu", short).status_code == 201
