"""Trends on real PostgreSQL: the series of a host or a label (points, CI, verdicts, what the detector left out and
why), changes, thresholds and events, the webhook to a real HTTP server on loopback (through Celery's own retry),
the fleet and its outliers, the Prometheus endpoint; who may call each route; bad input is a 4xx, never a 500."""
import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import text

from app.core.config import get_settings
from app.core.db import utcnow
from app.hosts.models import Host
from app.jobs.models import Job, Run
from tests.conftest import make_user

CPU = {"experiment": "cpu", "op": "fp64", "threads": 2}


@pytest.fixture(autouse=True)
def _clean_trends(session):
    yield
    session.rollback()
    # the rows that hang on no host or run (label thresholds, the notification target) are not in conftest's truncate
    session.execute(text("truncate trend_thresholds, trend_events, trend_checks, trend_notify restart identity cascade"))
    session.commit()


@pytest.fixture
def allow_loopback(monkeypatch):
    monkeypatch.setenv("HOSTBENCH_WEBHOOK_ALLOWED_HOSTS", "127.0.0.1")
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("HOSTBENCH_WEBHOOK_ALLOWED_HOSTS")
    get_settings.cache_clear()


def _host(session, name: str, labels: dict | None = None) -> int:
    h = Host(name=name, hostname=f"{name}.local", token_hash=name.ljust(64, "x"), labels=labels or {},
             inventory={}, last_seen_at=utcnow())
    session.add(h)
    session.commit()
    return h.id


def _row(mean: float, verdict: str = "valid", op: str = "fp64", threads: int = 2, block=None, eff=None) -> dict:
    flags = [] if verdict == "valid" else [{"kind": verdict, "severity": "caution", "text": f"made {verdict} here"}]
    return {"op": op, "threads": threads, "block_bytes": block, "unit": "GFLOP/s", "n": 3, "mean": mean,
            "stddev": mean * 0.01, "min": mean * 0.98, "max": mean * 1.02, "median": mean, "ci95_low": mean * 0.97,
            "ci95_high": mean * 1.03, "cv": 0.01, "values": [mean] * 3, "outliers": [], "peak": None,
            "efficiency": eff, "valid": verdict != "invalid", "invalid_reason": None, "verdict": verdict,
            "flags": flags}


def _run(session, host_id: int, rows: list[dict], minutes_ago: float, experiment: str = "cpu",
         labels: dict | None = None, status: str = "succeeded") -> int:
    job = Job(experiment=experiment, params={}, created_by="t")
    session.add(job)
    session.flush()
    at = utcnow() - timedelta(minutes=minutes_ago)
    run = Run(job_id=job.id, host_id=host_id, experiment=experiment, params={}, status=status, expected_duration_s=1,
              created_at=at, finished_at=at, result={"unit": "GFLOP/s", "rows": rows, "verdict": "valid"},
              labels_snapshot=labels)
    session.add(run)
    session.commit()
    return run.id


def _series(session, host_id: int, means: list[float], verdicts: dict[int, str] | None = None, start_min=1000.0,
            labels=None) -> list[int]:
    return [_run(session, host_id, [_row(m, (verdicts or {}).get(i, "valid"))], start_min - i, labels=labels)
            for i, m in enumerate(means)]


def _steady(n: int, level: float, seed: int = 0) -> list[float]:
    wobble = [0.0, 0.6, -0.4, 0.9, -0.8, 0.3, -0.2, 0.7, -0.6, 0.1]  # ±1 %: a quiet box
    return [level * (1 + wobble[(i + seed) % 10] / 100) for i in range(n)]


def test_a_hosts_series_has_one_point_per_run_with_its_ci_and_the_drop_is_a_regression(client, session):
    h = _host(session, "trend-a")
    means = _steady(14, 100.0) + _steady(12, 80.0, seed=3)  # a 20 % drop at point 14
    ids = _series(session, h, means, verdicts={5: "disturbed", 20: "oversubscribed"})
    _run(session, h, [_row(1.0, op="fp32")], 0.5)  # another metric: not in this series
    r = client.get("/api/trends/series", params={"host_id": h, **CPU})
    assert r.status_code == 200, r.text
    s = r.json()
    assert [p["run_id"] for p in s["points"]] == ids  # oldest first
    assert s["unit"] == "GFLOP/s" and s["lower_is_better"] is False
    p0 = s["points"][0]
    assert p0["ci95_low"] == pytest.approx(means[0] * 0.97) and p0["ci95_high"] == pytest.approx(means[0] * 1.03)
    excluded = [p for p in s["points"] if not p["used"]]
    assert [p["run_id"] for p in excluded] == [ids[5], ids[20]] and s["excluded"] == 2
    assert excluded[0]["excluded_reason"].startswith("disturbed: made disturbed here")
    assert len(s["changes"]) == 1, s["changes"]
    c = s["changes"][0]
    assert c["kind"] == "regression" and c["effect"] == pytest.approx(-0.2, abs=0.02)
    assert ids.index(c["run_id"]) in range(12, 16)
    assert s["method"]["test_window"] >= 5 and s["method"]["alpha"] < 0.01

    # the newest `limit` points, and the older ones page with before=
    r = client.get("/api/trends/series", params={"host_id": h, **CPU, "limit": 10}).json()
    assert [p["run_id"] for p in r["points"]] == ids[-10:] and r["has_more"] is True
    older = client.get("/api/trends/series", params={"host_id": h, **CPU, "limit": 10,
                                                      "before": r["points"][0]["at"]}).json()
    assert [p["run_id"] for p in older["points"]] == ids[-20:-10]


def test_a_rise_is_an_improvement_and_a_steady_series_has_no_change(client, session):
    h = _host(session, "trend-b")
    _series(session, h, _steady(12, 100.0) + _steady(12, 125.0))
    s = client.get("/api/trends/series", params={"host_id": h, **CPU}).json()
    assert [c["kind"] for c in s["changes"]] == ["improvement"]
    h2 = _host(session, "trend-c")
    _series(session, h2, _steady(40, 100.0))
    assert client.get("/api/trends/series", params={"host_id": h2, **CPU}).json()["changes"] == []


def test_a_label_series_holds_every_host_that_had_the_label_when_it_ran(client, session):
    a = _host(session, "lab-a", {"instance_type": "m5.large"})
    b = _host(session, "lab-b", {"instance_type": "m5.large"})
    c = _host(session, "lab-c", {"instance_type": "c6i.large"})
    _run(session, a, [_row(10)], 30, labels={"instance_type": "m5.large"})
    _run(session, b, [_row(11)], 20, labels={"instance_type": "m5.large"})
    _run(session, c, [_row(12)], 10, labels={"instance_type": "c6i.large"})
    _run(session, c, [_row(13)], 5, labels={"instance_type": "m5.large"})  # c was an m5 for that run
    s = client.get("/api/trends/series", params={"instance_type": "m5.large", **CPU}).json()
    assert [(p["host_name"], p["mean"]) for p in s["points"]] == [("lab-a", 10), ("lab-b", 11), ("lab-c", 13)]
    m = client.get("/api/trends/metrics", params={"instance_type": "m5.large"}).json()
    assert [(x["experiment"], x["op"], x["threads"], x["points"]) for x in m["data"]] == [("cpu", "fp64", 2, 3)]


@pytest.mark.parametrize("params", [
    {"host_id": 1, "experiment": "nope", "op": "fp64", "threads": 2},
    {"host_id": 1, "experiment": "cpu", "op": "fp64", "threads": 0},
    {"host_id": 1, "experiment": "cpu", "op": "fp64"},  # threads missing
    {"host_id": 1, **CPU, "limit": 5000},
    {"host_id": 1, **CPU, "limit": 1},
    {"host_id": 2**40, **CPU},
    {"host_id": 1, "experiment": "cpu", "op": "fp64;drop", "threads": 2},
    {"host_id": 1, **CPU, "before": "yesterday"},
    {"host_id": 1, **CPU, "block_bytes": -1},
    {"host_id": 1, **CPU, "threads": 300},  # the kernels declare at most 256 (resultfields.THREADS; was 4096 here)
    {"provider": "", **CPU},
])
def test_bad_series_queries_are_422(client, params):
    r = client.get("/api/trends/series", params=params)
    assert r.status_code == 422, (params, r.status_code, r.text)


def test_scopes_combine_and_an_empty_one_is_every_host(client, session):
    a = _host(session, "all-a", {"provider": "lab"})
    b = _host(session, "all-b", {"provider": "cloud"})
    ra = _run(session, a, [_row(10)], 30, labels={"provider": "lab"})
    rb = _run(session, b, [_row(20)], 20, labels={"provider": "cloud"})
    ids = lambda **q: [p["run_id"] for p in client.get("/api/trends/series", params={**q, **CPU}).json()["points"]]  # noqa: E731
    assert ids() == [ra, rb]
    assert ids(host_id=a, provider="lab") == [ra] and ids(host_id=a, provider="cloud") == []
    assert ids(host_id=b, before="2026-01-01T00:00:00Z", after="2026-02-01T00:00:00Z") == []  # an empty range


def test_an_unknown_host_has_an_empty_series_and_every_read_takes_a_viewer(client, session, anon_client):
    r = client.get("/api/trends/series", params={"host_id": 999, **CPU})
    assert r.status_code == 200 and r.json()["points"] == []
    viewer = make_user(session, "v", "viewer")
    for path, params in (("/api/trends/series", {"host_id": 1, **CPU}), ("/api/trends/metrics", {"host_id": 1}),
                         ("/api/trends/events", {}), ("/api/trends/thresholds", {}), ("/api/trends/fleet", {})):
        assert anon_client.get(path, params=params).status_code == 401, path
        assert anon_client.get(path, params=params, headers=viewer).status_code == 200, path


def test_thresholds_need_an_operator_and_are_checked(client, session, anon_client):
    h = _host(session, "th")
    viewer = make_user(session, "v", "viewer")
    operator = make_user(session, "o", "operator")
    body = {"host_id": h, **CPU, "kind": "below", "value": 90}
    assert anon_client.post("/api/trends/thresholds", json=body).status_code == 401
    assert anon_client.post("/api/trends/thresholds", json=body, headers=viewer).status_code == 403
    r = anon_client.post("/api/trends/thresholds", json=body, headers=operator)
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    assert r.json()["created_by"] == "o"
    label = {"label": "instance_type=m5.large", **CPU, "kind": "drop_pct", "value": 10}
    r = anon_client.post("/api/trends/thresholds", json=label, headers=operator)
    assert r.status_code == 201 and (r.json()["label_key"], r.json()["label_value"]) == ("instance_type", "m5.large")
    both = anon_client.post("/api/trends/thresholds", json={**body, "label": "region=eu"}, headers=operator).json()
    assert (both["host_id"], both["label_key"], both["label_value"]) == (h, "region", "eu")
    fleet = anon_client.post("/api/trends/thresholds", json={**CPU, "kind": "above", "value": 1e6}, headers=operator)
    assert fleet.status_code == 201 and fleet.json()["host_id"] is None and fleet.json()["label_key"] is None
    for bad, code in (({**body, "host_id": 99999}, 404), ({**body, "label": "colour=red"}, 422),
                      ({**body, "label": "region="}, 422), ({**body, "value": -1}, 422), ({**body, "value": "1"}, 422),
                      ({**body, "experiment": "x"}, 422), ({**body, "extra": 1}, 422), ({**body, "threads": 1.5}, 422),
                      ({**body, "threads": 0}, 422), ({**body, "kind": "sideways"}, 422)):
        r = anon_client.post("/api/trends/thresholds", json=bad, headers=operator)
        assert r.status_code == code, (bad, r.status_code, r.text)
    listed = anon_client.get("/api/trends/thresholds", params={"host_id": h}, headers=viewer).json()
    assert [t["id"] for t in listed["data"]] == [tid]  # this host's own, not those on a label or the fleet
    assert anon_client.get("/api/trends/thresholds", headers=viewer).json()["count"] == 4
    assert anon_client.delete(f"/api/trends/thresholds/{tid}", headers=viewer).status_code == 403
    assert anon_client.delete(f"/api/trends/thresholds/{tid}", headers=operator).status_code == 204
    assert anon_client.delete(f"/api/trends/thresholds/{tid}", headers=operator).status_code == 404
    audit = client.get("/api/audit").json()["data"]
    assert {"trend.threshold.create", "trend.threshold.delete"} <= {a["action"] for a in audit}


def test_the_webhook_target_is_an_admins_and_never_link_local_metadata_or_private(client, session, anon_client):
    operator = make_user(session, "o", "operator")
    assert anon_client.get("/api/trends/notifications", headers=operator).status_code == 403
    assert anon_client.put("/api/trends/notifications", json={"webhook_url": "https://example.org/h"},
                           headers=operator).status_code == 403
    for url in ("http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/x", "http://metadata.google.internal/",
                "http://127.0.0.1:9/hook", "http://10.1.2.3/hook", "http://[::ffff:169.254.169.254]/",
                "ftp://example.org/x", "http://user:pw@example.org/x", "http:///nohost", "http://0.0.0.0/"):
        r = client.put("/api/trends/notifications", json={"webhook_url": url})
        assert r.status_code == 422, (url, r.status_code, r.text)
    r = client.put("/api/trends/notifications", json={"email_to": "not an address"})
    assert r.status_code == 422
    r = client.get("/api/trends/notifications").json()
    assert r["webhook_url"] is None and r["smtp_configured"] is False and "SMTP is not configured" in r["email_note"]


def test_the_allow_list_lets_loopback_in_but_never_link_local(client, allow_loopback, monkeypatch):
    assert client.put("/api/trends/notifications", json={"webhook_url": "http://127.0.0.1:9/h"}).status_code == 200
    monkeypatch.setenv("HOSTBENCH_WEBHOOK_ALLOWED_HOSTS", "127.0.0.1,169.254.169.254,10.0.0.1")
    get_settings.cache_clear()
    assert client.put("/api/trends/notifications", json={"webhook_url": "http://169.254.169.254/"}).status_code == 422
    assert client.put("/api/trends/notifications", json={"webhook_url": "http://10.0.0.2/"}).status_code == 422


class _Hook:
    """A real HTTP server on loopback: records every POST; answers the statuses given, then 200."""

    def __init__(self, statuses: list[int] | None = None):
        self.received: list[dict] = []
        self.statuses = list(statuses or [])
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.received.append({"body": json.loads(body), "host": self.headers["Host"],
                                      "type": self.headers["Content-Type"]})
                self.send_response(hook.statuses.pop(0) if hook.statuses else 200)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook?secret=s3"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def test_a_run_below_its_threshold_records_an_event_and_the_webhook_gets_it(client, session, allow_loopback):
    from app.trends import evaluator
    from app.worker.tasks import notify_trend_event

    h = _host(session, "hooked", {"provider": "lab"})
    hook = _Hook(statuses=[503, 500])  # two failures, then 200: Celery's retry gets it there
    try:
        assert client.put("/api/trends/notifications", json={"webhook_url": hook.url}).status_code == 200
        client.post("/api/trends/thresholds", json={"host_id": h, **CPU, "kind": "below", "value": 90})
        client.post("/api/trends/thresholds", json={"label": "provider=lab", **CPU, "kind": "above", "value": 1000})
        client.post("/api/trends/thresholds", json={"label": "provider=elsewhere", **CPU, "kind": "below", "value": 1e9})
        client.post("/api/trends/thresholds", json={"host_id": h, "label": "provider=elsewhere", **CPU, "kind": "below",
                                                    "value": 1e9})  # this host, but only while labelled so: not now
        _run(session, h, [_row(95)], 3, labels={"provider": "lab"})  # above 90: nothing
        _run(session, h, [_row(85, verdict="disturbed")], 2, labels={"provider": "lab"})  # below, but not valid
        crossing = _run(session, h, [_row(85)], 1, labels={"provider": "lab"})
        ids = evaluator.evaluate_pending(session)
        assert len(ids) == 1
        assert evaluator.evaluate_pending(session) == []  # each run is looked at once
        ev = client.get("/api/trends/events", params={"host_id": h}).json()["data"]
        assert [(e["kind"], e["run_id"], e["webhook_status"]) for e in ev] == [("threshold", crossing, "pending")]
        assert "below the threshold 90" in ev[0]["text"]
        assert ev[0]["text"].startswith("hooked CPU throughput: fp64, 2 threads: 85")  # in words (issue 32)
        assert ev[0]["email_status"] == "skipped" and "SMTP is not configured" in ev[0]["email_detail"]
        notify_trend_event.apply(args=[ids[0]])  # the task as the worker runs it, with its retries
        assert len(hook.received) == 3
        got = hook.received[-1]
        assert got["body"]["kind"] == "threshold" and got["body"]["run_id"] == crossing
        assert got["body"]["host"]["name"] == "hooked" and got["type"] == "application/json"
        ev = client.get("/api/trends/events").json()["data"][0]
        assert ev["webhook_status"] == "sent" and ev["webhook_detail"] == "HTTP 200"
        series = client.get("/api/trends/series", params={"host_id": h, **CPU}).json()
        assert [e["run_id"] for e in series["events"]] == [crossing]
        assert [t["kind"] for t in series["thresholds"]] == ["below"]
    finally:
        hook.close()


def test_a_webhook_that_keeps_failing_ends_failed_and_a_dead_one_never_blocks(client, session, allow_loopback,
                                                                               monkeypatch):
    from app.trends import evaluator, notify

    monkeypatch.setenv("WEBHOOK_TIMEOUT_S", "1")
    get_settings.cache_clear()
    h = _host(session, "failing")
    hook = _Hook(statuses=[500] * 10)
    try:
        client.put("/api/trends/notifications", json={"webhook_url": hook.url})
        client.post("/api/trends/thresholds", json={"host_id": h, **CPU, "kind": "below", "value": 90})
        _run(session, h, [_row(50)], 1)
        (eid,) = evaluator.evaluate_pending(session)
        assert notify.deliver(session, eid, final=False) is True  # to be tried again
        assert notify.deliver(session, eid, final=True) is False
        ev = client.get("/api/trends/events").json()["data"][0]
        assert ev["webhook_status"] == "failed" and ev["webhook_detail"].startswith("HTTP 500")
    finally:
        hook.close()


def test_the_detector_records_one_regression_event_at_the_run_that_showed_it(client, session):
    from app.trends import evaluator

    h = _host(session, "stepped")
    ids = _series(session, h, _steady(12, 100.0) + _steady(10, 70.0, seed=4), start_min=100)
    evaluator.evaluate_pending(session)
    ev = client.get("/api/trends/events", params={"host_id": h}).json()["data"]
    assert [e["kind"] for e in ev] == ["regression"], ev
    assert ids.index(ev[0]["run_id"]) in range(12, 22)
    assert "-30" in ev[0]["text"] and ev[0]["webhook_status"] == "skipped"


def test_the_fleet_has_the_latest_headline_per_host_and_marks_an_outlier_among_its_label(client, session):
    hosts = [_host(session, f"f{i}", {"instance_type": "m5.large"}) for i in range(5)]
    for i, h in enumerate(hosts):
        _run(session, h, [_row(50 + i * 0.5, threads=1), _row(100 + i, threads=2, eff=0.5)], 20)
    _run(session, hosts[4], [_row(40, threads=2, eff=0.2)], 5)  # the newest for f4: far below the others
    mem = _host(session, "mem-only")
    _run(session, mem, [{**_row(9000, op="copy", threads=1, block=8388608), "unit": "MB/s"},
                        {**_row(12000, op="copy", threads=2, block=8388608), "unit": "MB/s"}], 5, experiment="memory")
    f = client.get("/api/trends/fleet").json()
    assert [m["key"] for m in f["metrics"]][:2] == ["cpu_fp64", "memory_copy"]
    by = {h["name"]: h for h in f["hosts"]}
    assert by["f0"]["cells"]["cpu_fp64"]["value"] == 100 and by["f0"]["cells"]["cpu_fp64"]["threads"] == 2
    assert by["f0"]["cells"]["cpu_fp64"]["efficiency"] == 0.5
    assert by["f4"]["cells"]["cpu_fp64"]["value"] == 40 and by["f4"]["cells"]["cpu_fp64"]["outlier"] is True
    assert "median" in by["f4"]["cells"]["cpu_fp64"]["outlier_note"]
    assert not any(by[f"f{i}"]["cells"]["cpu_fp64"]["outlier"] for i in range(4))
    assert by["mem-only"]["cells"]["memory_copy"]["value"] == 12000 and "cpu_fp64" not in by["mem-only"]["cells"]
    assert "MAD" in f["outlier_method"]
    assert client.get("/api/trends/fleet", params={"group_by": "colour"}).status_code == 422


def test_prometheus_scrape_needs_a_token_and_has_the_units_in_the_names(client, session, anon_client, runner):
    _, runner_headers = runner
    h = _host(session, "scraped", {"provider": "lab"})
    _run(session, h, [_row(123.5, threads=2, eff=0.61)], 1)
    assert anon_client.get("/api/metrics").status_code == 401
    assert anon_client.get("/api/metrics", headers=runner_headers).status_code == 401
    assert anon_client.get("/api/metrics", headers={"Authorization": "Bearer hbpat_" + "x" * 43}).status_code == 401
    r = anon_client.get("/api/metrics", headers=make_user(session, "prom", "viewer"))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    body = r.text
    assert "# HELP hostbench_cpu_fp64_gigaflops CPU FP64, most threads" in body
    assert "# TYPE hostbench_cpu_fp64_gigaflops gauge" in body
    line = next(x for x in body.splitlines() if x.startswith("hostbench_cpu_fp64_gigaflops{"))
    assert 'host="scraped"' in line and 'provider="lab"' in line and 'threads="2"' in line
    assert line.endswith(" 123.5")
    assert any(x.startswith("hostbench_headline_efficiency_ratio{") and x.endswith(" 0.61") for x in body.splitlines())



def test_metrics_are_openmetrics_when_asked_and_prometheus_text_otherwise(client, session):
    """Issue 32: /api/metrics said OpenMetrics and served the Prometheus text format. Both formats now, each read
    back by prometheus_client's own parser for it (the OpenMetrics one refuses a body without `# EOF`)."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as read_openmetrics
    from prometheus_client.parser import text_string_to_metric_families as read_prometheus

    h = _host(session, "scraped", {"provider": "lab"})
    _run(session, h, [_row(123.5, threads=2, eff=0.61)], 1)

    def gauge(families, name: str):
        family = next(f for f in families if f.name == name)
        assert family.type == "gauge"
        return family.samples[0]

    om = client.get("/api/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert om.status_code == 200 and om.headers["content-type"].startswith("application/openmetrics-text")
    assert om.text.endswith("# EOF\n") and om.headers["vary"] == "Accept"
    sample = gauge(list(read_openmetrics(om.text)), "hostbench_cpu_fp64_gigaflops")
    assert sample.value == 123.5 and sample.labels["host"] == "scraped" and sample.labels["threads"] == "2"

    for accept in ("text/plain", "*/*", None):
        r = client.get("/api/metrics", headers={"Accept": accept} if accept else {})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=0.0.4"), accept
        assert "# EOF" not in r.text
        sample = gauge(list(read_prometheus(r.text)), "hostbench_cpu_fp64_gigaflops")
        assert sample.value == 123.5 and sample.labels["provider"] == "lab"
        eff = gauge(list(read_prometheus(r.text)), "hostbench_headline_efficiency_ratio")
        assert eff.value == 0.61

EMBEDDED = ["http://[2002:7f00:1::]/h", "http://[2002:a9fe:a9fe::1]/h", "http://[2002:a00:1::]/h",  # 6to4
            "http://[64:ff9b::7f00:1]/h", "http://[64:ff9b::a9fe:a9fe]/h", "http://[64:ff9b:1::a00:1]/h",  # NAT64
            "http://[::ffff:127.0.0.1]/h", "http://[::ffff:10.0.0.1]/h", "http://[::ffff:0:a9fe:a9fe]/h",
            "http://[::127.0.0.1]/h", "http://[::a9fe:a9fe]/h",  # IPv4-compatible
            "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/h",  # Teredo (client 127.0.0.1)
            "http://[2002:808:808::]/h", "http://[64:ff9b::808:808]/h"]  # even a public IPv4 inside: the form is refused


def test_every_ipv6_form_that_embeds_an_ipv4_address_is_refused(client, allow_loopback, monkeypatch):
    """Before, 2002:7f00:1:: (6to4 of 127.0.0.1) and 64:ff9b::a9fe:a9fe (NAT64 of the metadata service) passed."""
    monkeypatch.setenv("HOSTBENCH_WEBHOOK_ALLOWED_HOSTS", "")
    get_settings.cache_clear()
    for url in EMBEDDED:
        r = client.put("/api/trends/notifications", json={"webhook_url": url})
        assert r.status_code == 422 and "embeds an IPv4" in r.text, (url, r.status_code, r.text)
    host = ",".join(u.split("[")[1].split("]")[0] for u in EMBEDDED)
    monkeypatch.setenv("HOSTBENCH_WEBHOOK_ALLOWED_HOSTS", host)  # not even when listed
    get_settings.cache_clear()
    for url in EMBEDDED:
        assert client.put("/api/trends/notifications", json={"webhook_url": url}).status_code == 422, url


def test_headlines_use_valid_rows_only_and_say_so_when_none_is(client, session, anon_client):
    """Fleet view and /api/metrics: the 4-thread row on 2 CPUs, disturbed and page-cache rows are never the
    headline; a host with no valid run says how many it has and why."""
    over = _host(session, "over")
    _run(session, over, [_row(20.0, threads=1), _row(30.0, threads=2), _row(36.17, "oversubscribed", threads=4)], 5)
    busy = _host(session, "busy")
    for i in range(3):
        _run(session, busy, [_row(40.0 + i, "disturbed", threads=2)], 10 - i)
    _run(session, busy, [{**_row(1808.0, "page_cache", op="seq_read", threads=1, block=4096), "unit": "MB/s"}], 3,
         experiment="disk")
    older = _host(session, "older")
    _run(session, older, [_row(33.0, threads=2)], 60)
    _run(session, older, [_row(10.0, "disturbed", threads=2)], 1)  # newer but disturbed: the older valid one stays
    lo = _host(session, "lo")
    _run(session, lo, [{**_row(30000.0, "loopback", op="tcp_stream", threads=1, block=65536), "unit": "Mbit/s"}], 2,
         experiment="network")
    by = {h["name"]: h for h in client.get("/api/trends/fleet").json()["hosts"]}
    assert by["over"]["cells"]["cpu_fp64"]["threads"] == 2 and by["over"]["cells"]["cpu_fp64"]["value"] == 30.0
    assert "cpu_fp64" not in by["busy"]["cells"] and "disk_seq_read" not in by["busy"]["cells"]
    assert by["busy"]["missing"] == {"cpu_fp64": "no valid run yet; 3 disturbed",
                                     "disk_seq_read": "no valid run yet; 1 page cache"}
    assert by["older"]["cells"]["cpu_fp64"]["value"] == 33.0 and by["older"]["missing"] == {}
    assert by["lo"]["cells"]["tcp_loopback"]["value"] == 30000.0  # a loopback figure is what that headline measures
    body = anon_client.get("/api/metrics", headers=make_user(session, "prom2", "viewer")).text
    cpu = [x for x in body.splitlines() if x.startswith("hostbench_cpu_fp64_gigaflops{")]
    assert any('host="over"' in x and x.endswith(" 30.0") for x in cpu)
    assert not any('host="busy"' in x for x in cpu)
    assert not any('threads="4"' in x for x in cpu)


def test_an_excluded_points_reason_names_its_verdict_once(client, session):
    """Issue 32: "disturbed: disturbed: CPU share ..." in Trends (the verdict's flags start with their verdict)."""
    h = _host(session, "trend-once")
    row = _row(50.0, verdict="disturbed")
    row["flags"] = [{"kind": "disturbed", "severity": "caution", "text": "disturbed: CPU share 0.41 of 2 in repeat 1"}]
    _run(session, h, [row], 1)
    s = client.get("/api/trends/series", params={"host_id": h, **CPU}).json()
    assert s["points"][0]["excluded_reason"] == "disturbed: CPU share 0.41 of 2 in repeat 1"
