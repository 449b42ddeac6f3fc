"""The remote commands' pieces without a server (httpx.MockTransport): where the server and token come from, errors
as one line, paging, the live stream's parsing and progress. backend/tests/test_cli_remote.py runs them for real."""
import argparse
import io
import json

import httpx
import pytest
from app.core.bounds import RUNS_PAGE_MAX, SAMPLES_PAGE_MAX
from hostbench_stack import ROOT

from hostbench_cli import remote


def _server(handler) -> remote.Server:
    client = httpx.Client(base_url="http://hb.test", transport=httpx.MockTransport(handler),
                          headers={"Authorization": "Bearer hbpat_x"})
    return remote.Server("http://hb.test", "hbpat_x", client)


def test_server_and_token_from_flags_then_environment(monkeypatch):
    monkeypatch.setenv("HOSTBENCH_SERVER_URL", "http://env.example/")
    monkeypatch.setenv("HOSTBENCH_TOKEN", "hbpat_env")
    s = remote.Server.from_args(argparse.Namespace(server=None, token=None))
    assert (s.url, s.token, s.client.headers["authorization"]) == ("http://env.example", "hbpat_env",
                                                                     "Bearer hbpat_env")
    s = remote.Server.from_args(argparse.Namespace(server="https://flag.example", token="hbpat_flag"))
    assert (s.url, s.token) == ("https://flag.example", "hbpat_flag")
    monkeypatch.delenv("HOSTBENCH_TOKEN")
    with pytest.raises(remote.RemoteError, match="no API token"):
        remote.Server.from_args(argparse.Namespace(server=None, token=None))
    with pytest.raises(remote.RemoteError, match="http:// or https://"):
        remote.Server.from_args(argparse.Namespace(server="ftp://x", token="t"))


def test_no_server_anywhere_says_how_to_give_one(monkeypatch):
    from hostbench_stack import admin

    monkeypatch.delenv("HOSTBENCH_SERVER_URL", raising=False)
    monkeypatch.setattr(admin, "live_up", lambda *a, **k: None)
    with pytest.raises(remote.RemoteError, match="no server"):
        remote.Server.from_args(argparse.Namespace(server=None, token="t"))
    monkeypatch.setattr(admin, "live_up", lambda *a, **k: {"public_url": "http://127.0.0.1:8000", "pid": 1})
    said = io.StringIO()
    s = remote.Server.from_args(argparse.Namespace(server=None, token="t"), say=said)
    assert s.url == "http://127.0.0.1:8000" and "local ./hostbench up" in said.getvalue()


def test_errors_are_one_line_and_exit_2(monkeypatch, capsys):
    s = _server(lambda req: httpx.Response(401, json={"detail": "API token unknown, expired or revoked"}))
    with pytest.raises(remote.RemoteError, match=r"refused the API token \(401\): API token unknown"):
        s.get_json("/api/runs", "listing runs")

    def down(req):
        raise httpx.ConnectError("Connection refused")

    monkeypatch.setattr(remote.Server, "from_args", classmethod(lambda cls, args, **k: _server(down)))
    rc = remote.main(argparse.Namespace(cmd="runs", wait=None, host=None, status=None, limit=5, json=False))
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: cannot reach http://hb.test") and err.count("\n") == 1


def test_runs_are_paged_to_the_limit_by_keyset():
    seen = []

    def handler(req):
        q = dict(req.url.params)
        before = int(q.get("before_id", 1001))
        seen.append((int(q["limit"]), q.get("before_id")))
        data = [{"id": before - 1 - i} for i in range(int(q["limit"]))]
        return httpx.Response(200, json={"data": data, "count": 450, "next_before_id": data[-1]["id"]})

    runs, count, more = remote.list_runs(_server(handler), limit=300)
    assert RUNS_PAGE_MAX == 200  # (the pages below)
    assert (len(runs), count, more) == (300, 450, False) and seen == [(200, None), (100, "801")]
    assert len({r["id"] for r in runs}) == 300


def test_table_headline_and_summary():
    run = {"id": 7, "host_name": "h", "experiment": "cpu", "params": {"op": "fp64", "threads": [1, 4]},
           "status": "succeeded", "finished_at": "2026-11-26T03:00:00.5Z", "unit": "GFLOP/s",
           "result": {"verdict": "valid", "rows": [{"mean": 10.0, "unit": "GFLOP/s", "valid": True},
                                                   {"mean": 38.25, "unit": "GFLOP/s", "valid": True}]}}
    table = remote.runs_table([run]).splitlines()
    assert table[1].split() == ["7", "h", "cpu", "fp64", "t=1,4", "succeeded", "valid", "best", "38.25", "GFLOP/s",
                                "2026-11-26", "03:00:00"]
    assert remote.headline({"result": {"trace": {"mean": 2.5}, "rows": []}, "unit": "GB/s"}) == "mean 2.50 GB/s"
    assert remote.headline({"result": None}) == "—"
    # a list's run (the light list): its stored headline and verdict, no rows
    light = {**run, "result": None, "verdict": "disturbed", "headline": {"value": None, "text": "no valid row"}}
    assert remote.runs_table([light]).splitlines()[1].split()[6:9] == ["disturbed", "no", "valid"]
    # the server's headline wins: never the disturbed row's figure
    disturbed = {"result": {"rows": [{"mean": 99.0, "unit": "GFLOP/s", "valid": True, "verdict": "disturbed"}],
                            "headline": {"value": None, "text": "no valid row yet; 1 disturbed"}}}
    assert remote.headline(disturbed) == "no valid row yet; 1 disturbed"


def _sse(*events: tuple[str, dict, int | None]) -> bytes:
    out = "retry: 1000\n\n"
    for kind, data, eid in events:
        out += (f"id: {eid}\n" if eid is not None else "") + f"event: {kind}\ndata: {json.dumps(data)}\n\n"
    return out.encode()


def test_follow_run_shows_progress_and_returns_the_end():
    run = {"id": 5, "status": "running", "expected_duration_s": 4, "started_at": "2026-11-26T03:00:00Z",
           "unit": "GB/s", "result": None}
    end = {**run, "status": "failed", "status_reason": "kernel crashed", "result": None,
           "finished_at": "2026-11-26T03:00:03Z"}
    body = _sse(("run", run, None), ("sample", {"seq": 0, "value": 12.5, "unit": "GB/s"}, 0),
                ("end", end, None))
    body = body.replace(b"event: end", b": ping\n\nevent: end")
    s = _server(lambda req: httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))
    out = io.StringIO()
    final = remote.follow_run(s, 5, out=out)
    text = out.getvalue()
    assert final["status"] == "failed"
    assert "0 samples" in text and "failed, 1 samples, now 12.50 GB/s, 3 s of ~4 s" in text
    assert "run 5 failed (kernel crashed)" in text


def test_sse_parser_joins_data_lines_and_skips_comments():
    lines = ["retry: 1000", "", ": ping", "", "id: 3", "event: sample", "data: {\"a\":", "data: 1}", ""]
    assert list(remote.sse_events(iter(lines))) == [("sample", "{\"a\":\n1}", "3")]


def test_the_pages_are_the_apis_own():
    """The client pages by the API's own bounds (app.core.bounds), which the OpenAPI document publishes; it keeps no
    copy of them."""
    doc = json.loads((ROOT / "frontend" / "openapi.json").read_text())

    def largest(path: str) -> int:
        return next(p["schema"]["maximum"] for p in doc["paths"][path]["get"]["parameters"] if p["name"] == "limit")

    assert (largest("/api/runs"), largest("/api/runs/{run_id}/samples")) == (RUNS_PAGE_MAX, SAMPLES_PAGE_MAX)
    assert (remote.RUNS_PAGE_MAX, remote.SAMPLES_PAGE_MAX) == (RUNS_PAGE_MAX, SAMPLES_PAGE_MAX)
    assert not [name for name in vars(remote) if name in ("RUNS_PAGE", "SAMPLES_PAGE")]


def test_ndjson_export_pages_by_seq():
    calls = []

    def handler(req):
        if req.url.path.endswith("/samples"):
            after = int(req.url.params["after_seq"])
            calls.append(after)
            n = SAMPLES_PAGE_MAX if after < 0 else 3
            return httpx.Response(200, json={"data": [{"seq": after + 1 + i} for i in range(n)], "count": n})
        return httpx.Response(200, json={"id": 1})

    buf = io.BytesIO()
    n = remote.export_ndjson(_server(handler), 1, buf)
    lines = buf.getvalue().decode().splitlines()
    assert n == len(lines) == SAMPLES_PAGE_MAX + 3
    assert calls == [-1, SAMPLES_PAGE_MAX - 1]
    assert [json.loads(x)["seq"] for x in lines[-2:]] == [SAMPLES_PAGE_MAX + 1, SAMPLES_PAGE_MAX + 2]


def test_following_a_suite_rides_out_a_server_restart_but_not_a_long_outage():
    """The API restarted while `run full --wait` followed a suite: the command stopped at the first refused
    connection although the suite went on. It now asks again for a while (the transport's own errors, as httpx
    raises them for a refused connection)."""
    sr = {"id": 3, "title": "Quick", "runs": [], "runs_done": 2, "runs_total": 2, "progress": 1.0,
          "expected_duration_s": 10, "status": "succeeded"}
    calls = {"n": 0}

    def flaky(req):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=req)
        return httpx.Response(200, json=sr)

    out = io.StringIO()
    assert remote.follow_suite(_server(flaky), 3, out=out, poll_s=0.01)["status"] == "succeeded"
    assert calls["n"] == 3 and "asking again" in out.getvalue()

    def down(req):
        raise httpx.ConnectError("[Errno 111] Connection refused", request=req)

    with pytest.raises(remote.RemoteError, match="goes on on the server"):
        remote.follow_suite(_server(down), 3, out=io.StringIO(), poll_s=0.01, outage_s=0.05)


def test_a_suite_run_reads_its_usual_time_with_the_cap_apart():
    """Issue 26: `./hostbench run` said "19 runs, about 6 h 34 min" for the Full system report, which usually takes
    about 95 min: that was its cap."""
    sr = {"expected_duration_s": 23648.0, "typical_duration_s": 5699.5}
    assert remote._estimate(sr) == "~1 h 35 min (cap 6 h 34 min)"
    assert remote._estimate({"expected_duration_s": 60.0, "typical_duration_s": None}) == "(cap 1 min 0 s)"


def test_follow_run_shows_the_usual_time_the_cap_apart_and_the_phase():
    """Issue 26: `./hostbench wait` counts against the run's typical time, names the cap, and says which reference
    tool runs."""
    phase = {"kind": "reference", "tool": "hpcc", "what": "HPL N = 5,760, 2 processes", "index": 3, "of": 8,
             "started_at": 1795900000.0, "typical_s": 75.6, "cap_s": 600.0}
    run = {"id": 6, "status": "running", "expected_duration_s": 1264, "typical_duration_s": 356, "phase": phase,
           "started_at": "2026-11-26T03:00:00Z", "unit": "GFLOP/s", "result": None}
    end = {**run, "status": "succeeded", "phase": None, "finished_at": "2026-11-26T03:05:50Z"}
    body = _sse(("run", run, None), ("end", end, None))
    s = _server(lambda req: httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))
    out = io.StringIO()
    remote.follow_run(s, 6, out=out)
    text = out.getvalue()
    assert "of ~356 s (cap 1264 s), hpcc 3/8: HPL N = 5,760, 2 processes" in text
    assert "run 6: succeeded, 0 samples, now —, 350 s of ~356 s (cap 1264 s)\n" in text  # the end: no phase
    assert remote.phase_words({"kind": "kernel", "what": "cpu kernel, fp64"}) == "cpu kernel, fp64"
    assert remote.phase_words(None) == ""
