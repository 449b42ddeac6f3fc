"""History filters (server-side) and export of a run's result and samples."""
import csv
import io

from app.jobs import dispatch


def _finished_run(client, session, host_id, headers, values=(50.0, 52.0)):
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu",
                                       "params": {"threads": [1], "repeats": len(values), "duration_s": 1}})
    run_id = r.json()["runs"][0]["id"]
    dispatch.dispatch_host(session, host_id)
    a = client.get("/api/runner/work?wait_s=0", headers=headers).json()
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": a["attempt"], "kernel_info": {"clock_ghz": 3.65}},
                headers=headers)
    client.post(f"/api/runner/runs/{run_id}/samples", headers=headers, json={"attempt": a["attempt"], "samples": [
        {"seq": i, "t": 1.7e9 + i, "interval_s": 1.0, "threads": 1, "repeat": i + 1, "warmup": False, "value": v,
         "unit": "GFLOP/s"} for i, v in enumerate(values)]})
    client.post(f"/api/runner/runs/{run_id}/finish", headers=headers, json={
        "attempt": a["attempt"], "status": "succeeded",
        "results": [{"threads": 1, "repeat": i + 1, "value": v, "unit": "GFLOP/s", "verified": True, "cpu_ns": 7}
                    for i, v in enumerate(values)]})
    return run_id


def test_runs_filter_by_provider_label_and_ids(client, session, runner):
    host_id, headers = runner  # registered with labels {"provider": "test"}
    first = _finished_run(client, session, host_id, headers)
    second = _finished_run(client, session, host_id, headers)
    assert client.get("/api/runs?provider=test").json()["count"] == 2
    assert client.get("/api/runs?provider=aws").json()["count"] == 0
    assert [r["id"] for r in client.get(f"/api/runs?ids={first}").json()["data"]] == [first]
    assert [r["id"] for r in client.get(f"/api/runs?ids={first},{second}").json()["data"]] == [second, first]
    assert client.get("/api/runs?ids=1;drop").status_code == 422
    assert client.get("/api/runs?created_after=2000-01-01T00:00:00Z").json()["count"] == 2
    assert client.get("/api/runs?created_before=2000-01-01T00:00:00Z").json()["count"] == 0


def test_export_csv_has_units_result_and_every_sample(client, session, runner):
    host_id, headers = runner
    run_id = _finished_run(client, session, host_id, headers)
    r = client.get(f"/api/runs/{run_id}/export?format=csv")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.text)))
    header = rows[2]
    result = dict(zip(header, rows[3], strict=False))
    assert (result["threads"], result["unit"], float(result["mean"]), result["cpu_ns"]) == ("1", "GFLOP/s", 51.0, "7.0")
    assert rows[0][-2:] == ["verdict", "valid"] and result["verdict"] == "valid" and result["verdict_reasons"] == ""
    samples = rows[rows.index(["# samples"]) + 2:]
    assert [s[0] for s in samples] == ["0", "1"]


def test_export_json_and_bad_format(client, session, runner):
    host_id, headers = runner
    run_id = _finished_run(client, session, host_id, headers)
    doc = client.get(f"/api/runs/{run_id}/export?format=json").json()
    assert doc["run"]["result"]["rows"][0]["mean"] == 51.0
    assert len(doc["samples"]) == 2
    assert client.get(f"/api/runs/{run_id}/export?format=xlsx").status_code == 422


def test_history_filters_by_the_labels_a_run_was_handed_out_under(client, session, runner):
    host_id, headers = runner  # registered with labels {"provider": "test"}
    before = _finished_run(client, session, host_id, headers)
    r = client.patch(f"/api/hosts/{host_id}/labels", json={"provider": "aws", "instance_type": "c7a.large"})
    assert r.status_code == 200, r.text
    after = _finished_run(client, session, host_id, headers)
    assert client.get(f"/api/runs/{before}").json()["labels_snapshot"] == {"provider": "test"}
    assert client.get(f"/api/runs/{after}").json()["labels_snapshot"] == {"provider": "aws", "instance_type": "c7a.large"}
    assert [r["id"] for r in client.get("/api/runs?provider=test").json()["data"]] == [before]
    assert [r["id"] for r in client.get("/api/runs?provider=aws").json()["data"]] == [after]
    assert [r["id"] for r in client.get("/api/runs?instance_type=c7a.large").json()["data"]] == [after]


def test_export_csv_defuses_formulas_a_runner_could_plant_and_keeps_numbers(client, session, runner):
    """A host name is the runner's; `=HYPERLINK(...)` must reach a spreadsheet as text, not a live formula."""
    from app.hosts.models import Host

    host_id, headers = runner
    run_id = _finished_run(client, session, host_id, headers)
    host = session.get(Host, host_id)
    host.name = '=HYPERLINK("http://evil.example","x")'
    session.commit()
    rows = list(csv.reader(io.StringIO(client.get(f"/api/runs/{run_id}/export?format=csv").text)))
    assert rows[0][3] == '\'=HYPERLINK("http://evil.example","x")'
    assert not any(c.startswith(("=", "+", "@", "\t", "\r")) for row in rows for c in row)


def test_the_csv_cell_rule():
    from app.core.csvcell import cell

    for text in ("=1+1", "+cmd", "-2+3+cmd|' /C calc'!A0", "@SUM(A1)", "\t=1", "\r=1", "-x"):
        assert cell(text) == "'" + text
    for kept in (-3.5, 7, "-3.5", "+1e-9", "-.5", "GFLOP/s", "", None, "a=b"):
        assert cell(kept) == kept
