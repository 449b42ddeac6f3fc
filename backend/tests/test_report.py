"""The report of a set of runs (GET /api/report, /api/report/html): every section, every number equal to the stored
run's, the bounds, who may read it, and a download that references nothing outside itself."""
import html
import json
import re

from app.jobs import dispatch
from app.reports.html import ci, extra_text, fmt, mean_sd, pct, peak_text, references_text, verdict_text
from app.reports.service import MAX_REPORT_RUNS
from app.results.schemas import ResultRow

from .conftest import make_user


def _finished(client, session, host_id, headers, threads, values):
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu",
                                       "params": {"threads": [threads], "repeats": len(values), "duration_s": 1}})
    run_id = r.json()["runs"][0]["id"]
    dispatch.dispatch_host(session, host_id)
    a = client.get("/api/runner/work?wait_s=0", headers=headers).json()
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": a["attempt"], "kernel_info": {"clock_ghz": 3.65}},
                headers=headers)
    client.post(f"/api/runner/runs/{run_id}/finish", headers=headers, json={
        "attempt": a["attempt"], "status": "succeeded",
        "results": [{"threads": threads, "repeat": i + 1, "value": v, "unit": "GFLOP/s", "verified": True,
                     "cpu_ns": 7, "cpu_share": share} for i, (v, share) in enumerate(values)]})
    return run_id


def test_report_every_section_and_number_equals_the_stored_runs(client, session, runner):
    host_id, headers = runner
    quiet = _finished(client, session, host_id, headers, 1, [(50.0, 1.0), (52.0, 1.0), (51.0, 1.0)])
    busy = _finished(client, session, host_id, headers, 2, [(90.0, 0.5), (96.0, 0.5)])  # disturbed: share 0.5
    r = client.get(f"/api/report?runs={quiet},{busy}")
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["selection"] == f"runs {quiet}, {busy}"
    [host] = doc["hosts"]
    assert host["id"] == host_id and host["inventory"]["cpu"]["model"] == "AMD EPYC 9R14"
    assert [a["area"] for a in doc["areas"]] == ["cpu"] and doc["areas"][0]["run_ids"] == [quiet, busy]
    assert doc["areas"][0]["source"] == "docs/methodology/cpu.md" and "FMA" in doc["areas"][0]["methodology"]
    assert "95 % confidence interval" in doc["statistics"]
    page = client.get(f"/api/report/html?runs={quiet},{busy}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    text = page.text
    for rid, want_verdict in ((quiet, "valid"), (busy, "disturbed")):
        stored = client.get(f"/api/runs/{rid}").json()
        [got] = [x for x in doc["runs"] if x["id"] == rid]
        assert got["result"] == stored["result"] and got["params"] == stored["params"]
        assert (got["status"], got["experiment"], got["area"]) == ("succeeded", "cpu", "cpu")
        assert got["result"]["verdict"] == want_verdict
        [row] = [ResultRow.model_validate(x) for x in stored["result"]["rows"]]
        assert row.peak is not None and row.efficiency is not None and row.ci95_low is not None
        # every figure of the row, as the file prints it, with its unit, its peak's arithmetic and its verdict
        for piece in (f"{fmt(row.mean)} ± {fmt(row.stddev)} {row.unit}", ci(row), peak_text(row, None),
                      pct(row.efficiency), verdict_text(row), references_text(row)):
            assert html.escape(piece) in text, piece
        assert f"Run #{rid}: CPU throughput on test-host" in text  # the experiment in words (issue 32)
    assert "51.00 ± 1.000 GFLOP/s" in text and "93.00 ± 4.243 GFLOP/s" in text
    # times as people read them, not ISO with microseconds, anywhere in the file, its data included (issue 32)
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d+", text)
    assert re.search(r"finished \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", text)
    # the first screen: what was measured, each run's headline with its verdict, what to look at first (issue 32)
    summary = doc["summary"]
    assert summary["hosts"] == ["test-host"] and summary["experiments"] == ["CPU throughput (2)"]
    assert [(r["run_id"], r["verdict"]) for r in summary["runs"]] == [(quiet, "valid"), (busy, "disturbed")]
    assert [(a["run_ids"], a["kind"], a["verdict"]) for a in summary["attention"]] == [([busy], "verdict", "disturbed")]
    assert summary["attention"][0]["text"].startswith(f"run {busy} (CPU throughput on test-host) disturbed: CPU share 0.50")
    first = text.index('id="summary"')
    assert first < text.index('id="machines"') and first < text.index(f'id="run-{quiet}"')
    top = text[first:text.index('id="machines"')]
    for r in summary["runs"]:
        stored = client.get(f"/api/runs/{r['run_id']}").json()["result"]
        assert r["headline"] == stored["headline"]["text"] and html.escape(r["headline"]) in top
    assert "caution: disturbed" in top and f'href="#run-{busy}"' in top and "1 thread" in top
    assert re.search(r"from \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC to ", top)
    # a flagged figure is never called valid: the disturbed row says so, with its reason
    assert "caution: disturbed: CPU share 0.50" in text
    for section in ('id="machines"', "AMD EPYC 9R14", 'id="area-cpu"', 'id="methodology"', "docs/methodology/cpu.md"):
        assert section in text
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    assert found is not None
    embedded = json.loads(found.group(1).replace("<\\/", "</"))
    assert [x["result"] for x in embedded["runs"]] == [x["result"] for x in doc["runs"]]
    # self-contained: no URL, no stylesheet, image or script fetched from anywhere
    assert not re.search(r"(https?:)?//[a-z0-9]", text.replace('xmlns="http://www.w3.org/2000/svg"', ""))
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=", text)


def test_report_by_job_bounds_and_unknown_ids(client, session, runner):
    host_id, headers = runner
    run_id = _finished(client, session, host_id, headers, 1, [(50.0, 1.0), (52.0, 1.0)])
    job_id = client.get(f"/api/runs/{run_id}").json()["job_id"]
    doc = client.get(f"/api/report?job={job_id}").json()
    assert [x["id"] for x in doc["runs"]] == [run_id] and doc["selection"] == f"job {job_id}"
    assert client.get("/api/report").status_code == 422
    assert client.get(f"/api/report?runs={run_id}&job={job_id}").status_code == 422
    assert client.get(f"/api/report?runs={run_id},999999").status_code == 404
    assert client.get("/api/report?job=999999").status_code == 404
    too_many = ",".join(str(run_id + i) for i in range(MAX_REPORT_RUNS + 1))
    r = client.get(f"/api/report?runs={too_many}")
    assert r.status_code == 422 and f"at most {MAX_REPORT_RUNS}" in r.text
    assert client.get("/api/report?runs=1;drop").status_code == 422


def test_report_of_a_suite_run_holds_every_run_of_the_suite(client, session, runner):
    host_id, _ = runner
    sr = client.post("/api/suite-runs", json={"suite": "quick", "host_ids": [host_id]}).json()
    client.post(f"/api/suite-runs/{sr['id']}/cancel")  # ended runs or not, the report names them all
    doc = client.get(f"/api/report?suite={sr['id']}")
    assert doc.status_code == 200, doc.text
    doc = doc.json()
    assert [x["id"] for x in doc["runs"]] == [r["id"] for r in sr["runs"]]
    assert doc["selection"] == f"suite run {sr['id']} (Quick health check)"
    html = client.get(f"/api/report/html?suite={sr['id']}")
    assert html.status_code == 200
    assert f'filename="hostbench-report-suite-run-{sr["id"]}-Quick-health-check.html"' in \
        html.headers["Content-Disposition"]
    assert client.get("/api/report?suite=999999").status_code == 404
    job_id = sr["runs"][0]["job_id"]
    assert client.get(f"/api/report?suite={sr['id']}&job={job_id}").status_code == 422


def test_report_viewers_may_read_it_and_no_one_signed_out(client, session, runner, anon_client):
    host_id, headers = runner
    run_id = _finished(client, session, host_id, headers, 1, [(50.0, 1.0)])
    viewer = make_user(session, "report-viewer", "viewer")
    assert anon_client.get(f"/api/report?runs={run_id}", headers=viewer).status_code == 200
    assert anon_client.get(f"/api/report/html?runs={run_id}", headers=viewer).status_code == 200
    assert anon_client.get(f"/api/report?runs={run_id}").status_code == 401
    assert anon_client.get(f"/api/report/html?runs={run_id}").status_code == 401


def test_numbers_keep_four_significant_digits():
    assert (fmt(0.001234), fmt(1234.5), fmt(51.0), fmt(None), fmt(0.0)) == ("0.001234", "1234", "51.00", "—", "0")


def test_a_rows_other_figures_carry_their_units():
    """IOPS, latency percentiles and loss are in the file too, each with the unit its kernel declares."""
    row = ResultRow(op="rand_read", threads=1, block_bytes=4096, unit="MB/s", n=3, mean=100.0, stddev=1.0, min=99.0,
                    max=101.0, median=100.0, ci95_low=97.5, ci95_high=102.5, cv=0.01, values=[99.0, 100.0, 101.0],
                    outliers=[], extra={"iops": 24414.0625, "lat_p99_us": 81.5, "count": 3.0},
                    extra_units={"iops": "IOPS", "lat_p99_us": "µs", "count": ""}, peak=None, efficiency=None,
                    valid=True, invalid_reason=None)
    assert extra_text(row) == "iops 24414 IOPS; lat_p99_us 81.50 µs; count 3.000"
    assert extra_text(row.model_copy(update={"extra": {}})) == "—"


def test_one_repeat_has_no_spread_to_state():
    """Issue 32: "47.67 ± 0.00" for one repeat claimed a precision nobody measured."""
    row = ResultRow(op="fp64", threads=1, block_bytes=None, unit="GFLOP/s", n=1, mean=47.666, stddev=0.0, min=47.666,
                    max=47.666, median=47.666, ci95_low=None, ci95_high=None, cv=0.0, values=[47.666], outliers=[],
                    peak=None, efficiency=None, valid=True, invalid_reason=None)
    assert mean_sd(row) == "47.67 GFLOP/s (one repeat)"
    two = row.model_copy(update={"n": 2, "stddev": 0.5})
    assert mean_sd(two) == "47.67 ± 0.5000 GFLOP/s"


def _row(mean, threads, block=None, peak=None, n=3, op="tcp_stream", unit="Mbit/s"):
    from app.results.schemas import Peak
    return ResultRow(op=op, threads=threads, block_bytes=block, unit=unit, n=n, mean=mean, stddev=mean / 50,
                     min=mean, max=mean, median=mean, ci95_low=None, ci95_high=None, cv=0.02, values=[mean] * n,
                     outliers=[], peak=Peak(value=peak, unit=unit, formula="f", source="computed") if peak else None,
                     efficiency=mean / peak if peak else None, valid=True, invalid_reason=None)


def _texts(svg_text):
    return [(float(m.group(1)), float(m.group(2)), m.group(3), m.group(4))
            for m in re.finditer(r'<text x="([\d.]+)" y="([\d.]+)"([^>]*)>([^<]*)</text>', svg_text)]


def test_report_charts_are_ticked_labelled_in_the_kernels_words_and_keep_the_peak_inside():
    """Issue 32: the downloaded charts overprinted their labels, clipped the peak line and had no ticks."""
    from hostbench_common.axes import axes
    from hostbench_common.axes import size_words as size

    from app.reports.svg import bars, nice_ticks

    assert nice_ticks(57) == [0, 20, 40, 60] and nice_ticks(9400) == [0, 2000, 4000, 6000, 8000, 10000]
    rows = [_row(100.0 * (i + 1), t, b, peak=1000.0) for i, (b, t) in enumerate(
        (b, t) for b in (1, 1024, 65536) for t in (1, 2, 4, 8))]
    out = bars(rows, "tcp_stream", axes("net", "tcp_stream"), fmt, size)
    h = float(re.search(r'viewBox="0 0 [\d.]+ ([\d.]+)"', out).group(1))
    texts = _texts(out)
    words = [t[3] for t in texts]
    # the axes in network terms, the value axis ticked with its unit
    assert "message size · streams" in words and "Mbit/s" in words and "1 stream" not in " ".join(words[:3])
    assert any("64 KiB, 8 streams" == w for w in words) and not any("thread" in w for w in words)
    for tick in ("0", "250", "500", "750", "1,000", "1,250"):
        assert tick in words
    # the peak line and its label inside the picture
    [peak_y] = [float(y) for y in re.findall(r'<line x1="\d+" y1="([\d.]+)"[^>]*stroke-dasharray="6 4"', out)]
    [label] = [t for t in texts if t[3].startswith("peak ")]
    assert 0 < label[1] - 12 and label[1] < peak_y < h
    # 12 bars are narrow: their labels are turned, each from its own bar, none overprinting the next
    turned = [t for t in texts if "rotate(-40" in t[2]]
    assert len(turned) == 12 and all(b[0] - a[0] >= 12 for a, b in zip(turned, turned[1:], strict=False))
    assert max(t[1] for t in turned) < h
    # few wide bars: two short lines under each, centred on the bar, apart from the next bar's
    few = bars([_row(50.0, 1, op="fp64", unit="GFLOP/s"), _row(90.0, 2, op="fp64", unit="GFLOP/s")], "fp64",
               axes("cpu", "fp64"), fmt, size)
    under = [t for t in _texts(few) if t[3] in ("1 thread", "2 threads")]
    assert len(under) == 2 and under[1][0] - under[0][0] > 6 * len("2 threads") * 1.2
    assert "threads" in [t[3] for t in _texts(few)]
    assert axes("net", "udp_rr").sized == "datagrams" and axes("memory", "latency").size == "working set per thread"


def test_the_summary_points_at_big_gaps_to_peak_and_reference_and_runs_without_a_result():
    """What to look at first: a headline far below its peak, or far from its reference tool; a failed run; never a
    serving run (it has no figures of its own)."""
    from datetime import UTC, datetime, timedelta

    from app.jobs.schemas import RunPublic
    from app.reports.summary import PEAK_GAP, REFERENCE_GAP, summarise
    from app.results.schemas import ReferenceFigure, RunHeadline, RunResult
    from app.results.verdict import Flag

    t0 = datetime(2026, 11, 29, 3, 1, 5, 123456, tzinfo=UTC)

    def run(i, kind, row=None, status="succeeded", reason=None):
        res = None
        if row is not None:
            res = RunResult(unit=row.unit, rows=[row], verdict=row.verdict, headline=RunHeadline(
                value=row.mean, unit=row.unit, threads=row.threads, op=row.op, block_bytes=row.block_bytes,
                text=f"best {row.mean:g} {row.unit}"))
        return RunPublic.model_construct(id=i, host_name="h", experiment=kind, status=status, status_reason=reason,
                                         result=res, started_at=t0 + timedelta(minutes=i),
                                         finished_at=t0 + timedelta(minutes=i, seconds=65))

    far = _row(400.0, 1, 65536, peak=1000.0)  # 40 % of its peak
    near = _row(900.0, 1, 1, peak=1000.0).model_copy(update={"references": [ReferenceFigure(
        tool="iperf3", status="ok", value=600.0, unit="Mbit/s", ratio=1.5)]})
    ok = _row(50.0, 2, op="fp64", unit="GFLOP/s", peak=60.0)
    s = summarise([run(1, "network_drive", far), run(2, "network_drive", near), run(3, "cpu", ok),
                   run(4, "network_serve"), run(5, "memory", status="failed", reason="kernel exited 2")], ["h"])
    assert s.experiments == ["Network (two hosts) (2)", "CPU throughput (1)", "Network (two hosts), serving (1)",
                             "Memory (1)"]
    assert (s.started_at, s.ended_at) == (t0 + timedelta(minutes=1), t0 + timedelta(minutes=5, seconds=65))
    assert [(a.run_ids, a.kind) for a in s.attention] == [([5], "no_result"), ([1], "peak_gap"), ([2], "reference_gap")]
    assert "40 % of its peak 1000 Mbit/s" in s.attention[1].text and "= 1.50" in s.attention[2].text
    assert PEAK_GAP * 1000 > far.mean and near.references[0].ratio > REFERENCE_GAP
    [r1, r2, r3, r4, r5] = s.runs
    assert (r1.where, r1.efficiency, r1.took_s) == ("tcp_stream, 64 KiB messages, 1 stream", 0.4, 65.0)
    assert (r2.reference, r2.reference_ratio) == ("iperf3 600 Mbit/s", 1.5)
    assert (r3.where, r3.verdict, r3.peak) == ("fp64, 2 threads", "valid", 60.0)
    assert r4.headline == "no result" and r5.headline == "no result: kernel exited 2"

    # many runs of one verdict are one item: the list stays one screen however many runs a suite has
    def disturbed(share):
        return ok.model_copy(update={"verdict": "disturbed", "flags": [Flag(
            kind="disturbed", severity="caution", text=f"disturbed: CPU share {share} in repeat 1 (below 0.90)")]})
    s = summarise([run(6, "cpu", disturbed(0.23)), run(7, "cpu", disturbed(0.05)), run(8, "cpu", disturbed(0.5)),
                   run(9, "cpu", ok.model_copy(update={"verdict": "invalid", "flags": [Flag(
                       kind="above_peak", severity="invalid", text="120 % of the peak")]}))], ["h"])
    assert [(a.run_ids, a.verdict) for a in s.attention] == [([9], "invalid"), ([6, 7, 8], "disturbed")]
    assert s.attention[1].text == ("3 runs disturbed: 6, 7, 8; run 6 (CPU throughput on h): CPU share 0.23 in "
                                   "repeat 1 (below 0.90)")
    assert s.attention[0].text == "run 9 (CPU throughput on h) invalid: 120 % of the peak"
