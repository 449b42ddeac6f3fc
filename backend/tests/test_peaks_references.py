"""Peaks: computed from the inventory, overridable by a person; reference figures stored beside ours with the ratio."""
from app.hosts.peaks import cpu_peak
from app.jobs import dispatch
from tests.conftest import ZEN4_INVENTORY

ZEN5 = {"cpu": {**ZEN4_INVENTORY["cpu"], "family": 0x1A, "model_number": 0x02}}


def test_cpu_peak_arithmetic_zen4_and_zen5():
    p4, _ = cpu_peak(ZEN4_INVENTORY, "fp64", 2, "avx512", 3.65)
    p5, _ = cpu_peak(ZEN5, "fp64", 2, "avx512", 3.65)
    p5_avx2, _ = cpu_peak(ZEN5, "fp32", 1, "avx2", 3.65)
    assert p4.value == 2 * 3.65 * 16  # double-pumped 512-bit on a 256-bit datapath
    assert p5.value == 2 * 3.65 * 32  # native 512-bit FMA
    assert p5_avx2.value == 1 * 3.65 * 32  # 256-bit vectors use half of Zen 5's datapath
    assert "2 FMA pipes" in p5.formula and "measured under load" in p5.formula


def test_cpu_peak_unknown_is_unknown_not_guessed():
    unknown = {"cpu": {**ZEN4_INVENTORY["cpu"], "vendor": "HygonGenuine", "isa": []}}  # and no ISA flags
    peak, why = cpu_peak(unknown, "fp64", 1, "avx2", 3.0)
    assert peak is None and "not in the peak table" in why
    peak, why = cpu_peak(ZEN4_INVENTORY, "fp64", 1, "avx512", None)
    assert peak is None and why == "CPU clock unknown until a CPU run measures it"


def test_oversubscribed_threads_do_not_raise_the_peak():
    p2, _ = cpu_peak(ZEN4_INVENTORY, "fp64", 2, "avx512", 3.65)
    p8, _ = cpu_peak(ZEN4_INVENTORY, "fp64", 8, "avx512", 3.65)
    assert p8.value == p2.value and "8 threads share 2 cores" in p8.formula


def test_peak_override_replaces_the_computed_peak(client, runner):
    host_id, _ = runner
    r = client.put(f"/api/hosts/{host_id}/peaks/cpu_fp64", json={"value": 150.0, "note": "vendor datasheet"})
    assert r.status_code == 200
    peak = r.json()["peaks"]["cpu_fp64"]
    since = peak.pop("since")
    assert peak == {"value": 150.0, "unit": "GFLOP/s", "source": "user", "formula": "entered by test-admin: vendor datasheet"}
    assert since and since.startswith(str(__import__("datetime").date.today().year))  # when, for the runs it reaches
    assert client.put(f"/api/hosts/{host_id}/peaks/cpu_fp64", json={"value": -1}).status_code == 422
    assert client.put(f"/api/hosts/{host_id}/peaks/warp_drive", json={"value": 1}).status_code == 422
    assert client.delete(f"/api/hosts/{host_id}/peaks/cpu_fp64").json()["peaks"]["cpu_fp64"] is None  # no clock yet


def test_reference_figures_are_stored_beside_ours_with_the_ratio(client, session, runner):
    host_id, headers = runner
    client.put(f"/api/hosts/{host_id}/peaks/cpu_fp64", json={"value": 120.0})
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu",
                                       "params": {"threads": [1, 2], "repeats": 1, "duration_s": 1}})
    run_id = r.json()["runs"][0]["id"]
    dispatch.dispatch_host(session, host_id)
    client.get("/api/runner/work?wait_s=0", headers=headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": {}}, headers=headers)
    refs = [
        {"tool": "hpcc", "status": "ok", "argv": ["mpirun", "-np", "2", "hpcc"], "matches": {"op": "fp64", "threads": 2},
         "metrics": [{"name": "hpl_gflops", "value": 80.0, "unit": "GFLOP/s"}]},
        {"tool": "likwid-bench", "status": "unavailable", "reason": "likwid-bench is not installed on this host",
         "matches": {"op": "fp64", "threads": 1}},
    ]
    res = [{"threads": t, "repeat": 1, "value": v, "unit": "GFLOP/s", "verified": True} for t, v in ((1, 55.0), (2, 100.0))]
    client.post(f"/api/runner/runs/{run_id}/finish", headers=headers,
                json={"attempt": 1, "status": "succeeded", "results": res, "references": refs})
    one, two = client.get(f"/api/runs/{run_id}").json()["result"]["rows"]
    assert one["peak"]["value"] == 60.0 and one["peak"]["source"] == "user"  # 120 for 2 cores, 1 used
    assert one["references"] == [{"tool": "likwid-bench", "status": "unavailable",
                                  "reason": "likwid-bench is not installed on this host", "note": None, "metric": None,
                                  "value": None, "unit": None, "ratio": None, "argv": []}]
    assert two["references"][0]["ratio"] == 100.0 / 80.0
    assert two["references"][0]["metric"] == "hpl_gflops"


def test_a_reference_s_figure_or_reason_reaches_the_csv_and_json_exports(client, session, runner):
    """Issue 26: the reference's own figure (value, unit, tool) and, where there is none, the reason travel with
    the run's exports; a "none" entry (no tool measures the op) and a note (sockperf at its nearest size) too."""
    import csv
    import io

    host_id, headers = runner
    r = client.post("/api/jobs", json={"experiment": "cpu", "host_ids": [host_id],
                                       "params": {"op": "int32", "threads": [1, 2], "repeats": 1, "duration_s": 1}})
    run_id = r.json()["runs"][0]["id"]
    dispatch.dispatch_host(session, host_id)
    client.get("/api/runner/work?wait_s=0", headers=headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": {}}, headers=headers)
    why = "no reference tool measures int32: HPL and likwid-bench count floating-point operations only"
    refs = [
        {"tool": "none", "status": "none", "reason": why, "matches": {"op": "int32"}},
        {"tool": "hpcc", "status": "ok", "argv": ["mpirun", "-np", "2", "hpcc"], "note": "hpcc at N=8064",
         "matches": {"op": "int32", "threads": 2}, "metrics": [{"name": "x", "value": 40.0, "unit": "GIOP/s"}]},
    ]
    res = [{"threads": t, "repeat": 1, "value": v, "unit": "GIOP/s", "verified": True, "op": "int32"}
           for t, v in ((1, 30.0), (2, 60.0))]
    assert client.post(f"/api/runner/runs/{run_id}/finish", headers=headers,
                       json={"attempt": 1, "status": "succeeded", "results": res, "references": refs}).status_code == 200
    text = client.get(f"/api/runs/{run_id}/export?format=csv").text
    lines = list(csv.reader(io.StringIO(text)))
    at = lines.index(["# references"])
    header, body = lines[at + 1], lines[at + 2:lines.index(["# samples"])]
    assert header == ["op", "block_bytes", "threads", "tool", "status", "metric", "value", "unit", "ratio", "reason",
                      "note", "argv"]
    got = [dict(zip(header, line, strict=True)) for line in body]
    assert [(g["threads"], g["tool"], g["status"]) for g in got] == [("1", "none", "none"), ("2", "none", "none"),
                                                                     ("2", "hpcc", "ok")]
    assert got[0]["reason"] == why and got[0]["value"] == ""
    assert (got[2]["value"], got[2]["unit"], got[2]["ratio"], got[2]["note"]) == ("40.0", "GIOP/s", "1.5",
                                                                                   "hpcc at N=8064")
    doc = client.get(f"/api/runs/{run_id}/export?format=json").json()
    two = doc["run"]["result"]["rows"][1]["references"]
    assert [(x["tool"], x["status"], x["reason"], x["value"], x["note"]) for x in two] == [
        ("none", "none", why, None, None), ("hpcc", "ok", None, 40.0, "hpcc at N=8064")]
