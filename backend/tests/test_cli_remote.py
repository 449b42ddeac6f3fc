"""The CLI's remote commands (`./hostbench runs`, `wait`, `export`, `parse --import`) against a live stack: real API,
worker, runner and C kernel; each command a subprocess (an argv list), its output checked against the API."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from hostbench_stack.stack import Stack

from tests.conftest import fresh_db

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "common" / "tests" / "fixtures" / "reftools"
AUTH: dict[str, str] = {}




@pytest.fixture(scope="module")
def stack():
    state = Path(tempfile.mkdtemp(prefix="hb-cli-", dir=os.environ.get("HOSTBENCH_TEST_STATE")))
    s = Stack(state, database_url=fresh_db("hostbench_cli_remote"), redis_url=os.environ["REDIS_URL"],
              runner_name="cli-host")
    s.start()
    AUTH.update(s.admin_headers())
    yield s
    s.stop()


def cli(*argv: str, server: str | None = None, token: str | None = None, timeout: float = 120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTBENCH_")}
    if server is not None:
        env["HOSTBENCH_SERVER_URL"] = server
    if token is not None:
        env["HOSTBENCH_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "hostbench_cli", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _token() -> str:
    return AUTH["Authorization"].split(" ", 1)[1]


def _host_id(url: str) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        hosts = httpx.get(f"{url}/api/hosts", headers=AUTH, timeout=5).json()["data"]
        if hosts and hosts[0]["online"]:
            return hosts[0]["id"]
        time.sleep(0.3)
    raise AssertionError("the runner never came online")


def _start_run(url: str, host_id: int) -> int:
    body = {"host_ids": [host_id], "experiment": "cpu",
            "params": {"op": "fp64", "threads": [1], "repeats": 2, "duration_s": 1.0, "warmup_s": 0.2}}
    r = httpx.post(f"{url}/api/jobs", json=body, headers=AUTH, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()["runs"][0]["id"]


def test_wait_runs_and_export_against_a_live_server(stack):
    url = stack.url
    host_id = _host_id(url)
    run_id = _start_run(url, host_id)

    # wait: follows the live stream to the end, progress on stderr; exit 0 because it succeeded
    w = cli("wait", str(run_id), "--timeout", "90", "--server", url, "--token", _token())
    assert w.returncode == 0, w.stderr
    run = httpx.get(f"{url}/api/runs/{run_id}", headers=AUTH, timeout=5).json()
    assert run["status"] == "succeeded"
    assert f"run {run_id} succeeded" in w.stderr and "GFLOP/s" in w.stderr and "samples" in w.stderr

    # runs: the table and the JSON say what the API says
    t = cli("runs", "--host", "cli-host", server=url, token=_token())
    assert t.returncode == 0, t.stderr
    header, line = t.stdout.splitlines()[:2]
    assert header.split()[:3] == ["ID", "HOST", "EXPERIMENT"]
    assert line.split()[:5] == [str(run_id), "cli-host", "cpu", "fp64", "t=1"]
    # the headline is the server's (valid rows only): a figure with its unit, or why there is none (this run may
    # be disturbed on a busy machine)
    headline = run["result"]["headline"]
    assert "succeeded" in line and headline["text"] in line
    if headline["value"] is not None:
        assert "GFLOP/s" in line
        best = max(row["mean"] for row in run["result"]["rows"] if row["verdict"] == "valid")
        assert f"best {best:.2f}"[:8] in line or f"best {best:.0f}" in line or f"best {best:.1f}" in line
    else:
        assert headline["text"].startswith("no valid row yet; ") and "GFLOP/s" not in line
    j = cli("runs", "--json", "--status", "succeeded", "--host", str(host_id), server=url, token=_token())
    assert j.returncode == 0, j.stderr
    listed = json.loads(j.stdout)
    assert listed["count"] == 1 and listed["data"][0]["id"] == run_id
    assert listed["data"][0]["result"] == run["result"]

    # export: CSV and JSON are the server's export, byte for byte; NDJSON is every sample, in seq order
    for fmt in ("csv", "json"):
        e = cli("export", str(run_id), "--format", fmt, server=url, token=_token())
        assert e.returncode == 0, e.stderr
        api = httpx.get(f"{url}/api/runs/{run_id}/export?format={fmt}", headers=AUTH, timeout=10).text
        assert e.stdout == api
    rows = list(csv.reader(io.StringIO(e.stdout if fmt == "csv" else api)))
    assert rows
    out = Path(tempfile.mkdtemp()) / "samples.ndjson"
    n = cli("export", str(run_id), "--format", "ndjson", "-o", str(out), server=url, token=_token())
    assert n.returncode == 0, n.stderr
    samples = [json.loads(x) for x in out.read_text().splitlines()]
    api_samples = httpx.get(f"{url}/api/runs/{run_id}/samples", headers=AUTH, timeout=10).json()["data"]
    assert samples == api_samples and len(samples) >= 2
    assert [s["seq"] for s in samples] == list(range(len(samples)))
    assert all(s["unit"] == "GFLOP/s" for s in samples)
    assert f"wrote run {run_id} (ndjson, {len(samples)} samples)" in n.stderr

    # runs --wait on a finished run returns at once with its status
    rw = cli("runs", "--wait", str(run_id), server=url, token=_token())
    assert rw.returncode == 0 and f"run {run_id} succeeded" in rw.stderr


def test_wait_exits_1_when_the_run_did_not_succeed(stack):
    url = stack.url
    host_id = _host_id(url)
    body = {"host_ids": [host_id], "experiment": "cpu_trace", "params": {"op": "fp32", "threads": 1, "duration_s": 60}}
    run_id = httpx.post(f"{url}/api/jobs", json=body, headers=AUTH, timeout=10).json()["runs"][0]["id"]
    proc = subprocess.Popen([sys.executable, "-m", "hostbench_cli", "wait", str(run_id), "--server", url,
                             "--token", _token()], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 30
        while httpx.get(f"{url}/api/runs/{run_id}", headers=AUTH, timeout=5).json()["status"] != "running":
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.3)
        assert httpx.post(f"{url}/api/runs/{run_id}/cancel", headers=AUTH, timeout=10).status_code == 202
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert f"run {run_id} cancelled" in err


def test_run_a_suite_and_follow_it_as_one_unit(stack):
    """`./hostbench run quick --hosts NAME --wait`: the suite run is made on the server, its progress shown as one
    unit, and the exit status says whether every run succeeded (here: cancelled from the dashboard's side -> 1)."""
    url = stack.url
    _host_id(url)
    proc = subprocess.Popen([sys.executable, "-m", "hostbench_cli", "run", "quick", "--hosts", "cli-host", "--wait",
                             "--server", url, "--token", _token()], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            runs = httpx.get(f"{url}/api/suite-runs", headers=AUTH, timeout=5).json()["data"]
            if runs and runs[0]["runs_done"] == 0 and runs[0]["status"] == "running":
                break
            assert time.monotonic() < deadline, "the suite run never appeared"
            time.sleep(0.3)
        sr = runs[0]
        time.sleep(2.5)  # one progress line at least
        assert httpx.post(f"{url}/api/suite-runs/{sr['id']}/cancel", headers=AUTH, timeout=10).status_code == 202
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    # it ends with the results table: each run, its status, figure, verdict, duration and end
    table = out.splitlines()
    assert table[0].split() == ["RUN", "HOST", "EXPERIMENT", "OP", "STATUS", "VERDICT", "HEADLINE", "TOOK", "ENDED"]
    assert len(table) == 1 + sr["runs_total"] and all("cli-host" in row for row in table[1:]), out
    assert any("cancelled" in row for row in table[1:]), out
    assert f"suite run {sr['id']}: Quick health check on hosts" in err and f"{sr['runs_total']} runs" in err
    assert f"of {sr['runs_total']} runs done" in err  # progress as one unit
    assert f"suite run {sr['id']} cancelled" in err
    # no such suite, no such host: one line, exit 2, nothing started
    for argv, words in ((["run", "nope", "--hosts", "cli-host"], "suite 'nope' not found; the built-in suites are"),
                        (["run", "quick", "--hosts", "no-such-host"], "no host named 'no-such-host'"),
                        (["run", "full", "--hosts", "cli-host", "--peer", "no-peer"], "no host named 'no-peer'"),
                        (["run", "full", "--hosts", "cli-host", "--peer", "cli-host"], "picked too")):
        r = cli(*argv, server=url, token=_token())
        assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert httpx.get(f"{url}/api/suite-runs", headers=AUTH, timeout=5).json()["data"][0]["id"] == sr["id"]


def test_bands_file_and_a_health_check_from_the_terminal(stack, tmp_path):
    """`./hostbench bands set|export|import` (a YAML file) and `./hostbench check --hosts NAME --wait`: one JSON line
    last, exit 1 exactly when a host FAILED (a declared band no CPU meets: FAIL if its measurement was valid, else
    DISTURBED and exit 0; never anything else)."""
    url, tok = stack.url, _token()
    host_id = _host_id(url)
    kind = next(h for h in httpx.get(f"{url}/api/hosts", headers=AUTH, timeout=5).json()["data"]
                if h["id"] == host_id)["inventory"]["cpu"]
    kind = f"cpu={' '.join(kind['model'].split())}/{kind['cores']}"
    r = cli("bands", "set", "--kind", kind, "--experiment", "cpu", "--op", "fp64", "--threads", "1", "--lower", "1e9",
            "--unit", "GFLOP/s", "--note", "no CPU does this", server=url, token=tok)
    assert r.returncode == 0 and "version 1" in r.stdout, r.stderr
    f = tmp_path / "bands.yaml"
    assert cli("bands", "export", str(f), server=url, token=tok).returncode == 0
    assert "lower: 1000000000.0" in f.read_text() and "format: hostbench.bands/1" in f.read_text()
    r = cli("bands", "import", str(f), server=url, token=tok)
    assert r.returncode == 0 and json.loads(r.stdout) == {"added": 0, "changed": 0, "unchanged": 1, "removed": 0}
    assert "no CPU does this" in cli("bands", "list", server=url, token=tok).stdout

    saved = httpx.post(f"{url}/api/suites", headers=AUTH, timeout=10, json={
        "title": "tiny CPU", "description": "", "items": [{"experiment": "cpu", "params": {
            "op": "fp64", "threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0, "quiet_wait_s": 5,
            "disturbed_retries": 2}}]}).json()
    r = cli("check", "--suite", saved["id"], "--hosts", "cli-host", "--wait", "--timeout", "300",
            server=url, token=tok, timeout=400)
    line = json.loads(r.stdout.strip().splitlines()[-1])
    assert line["hosts"] == 1 and line["suite"] == saved["id"], line
    verdict = next(k for k, n in line["counts"].items() if n)
    assert verdict in ("FAIL", "DISTURBED"), (line, r.stderr)
    assert r.returncode == (1 if verdict == "FAIL" else 0), (r.returncode, line)
    if verdict == "FAIL":
        fail = line["failures"][0]
        assert line["failed"] == ["cli-host"] and fail["band"] == {"source": "declared", "lower": 1e9, "upper": None,
                                                                   "version": 1}
        assert fail["distance"] < -0.99 and fail["figure"]["op"] == "fp64"
    assert "cli-host" in r.stderr and verdict in r.stderr  # the table
    print(f"\ncheck from the terminal: {verdict} ({line['counts']})")
    bad = cli("check", "--suite", "quick", "--label", "nolabel", server=url, token=tok)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr


def test_import_a_reference_output_into_a_hosts_history(stack):
    url = stack.url
    host_id = _host_id(url)
    fixture = FIXTURES / "fio-3.33-seqread.json"
    r = cli("parse", "fio", str(fixture), "--import", "--host", "cli-host", server=url, token=_token())
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)
    assert (row["host_id"], row["tool"], row["file_name"], row["imported"]) == (host_id, "fio", fixture.name, True)
    assert row["imported_by"] == "stack-admin"
    listed = httpx.get(f"{url}/api/reference/imports?host_id={host_id}", headers=AUTH, timeout=5).json()
    assert listed["data"][0] == row
    local = cli("parse", "fio", str(fixture))  # the same parser, offline: the same figures
    assert local.returncode == 0, local.stderr
    assert json.loads(local.stdout)["metrics"] == row["metrics"]

    bad = cli("parse", "fio", str(FIXTURES / "fio-3.33-seqread-truncated.json"), "--import", "--host", str(host_id),
              server=url, token=_token())
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "422" in bad.stderr
    assert "Traceback" not in bad.stderr
    nohost = cli("parse", "fio", str(fixture), "--import", "--host", "nope", server=url, token=_token())
    assert nohost.returncode == 2 and "no host named 'nope'" in nohost.stderr


def test_clear_errors_never_a_traceback(stack):
    url = stack.url
    r = cli("runs", server=url, token="hbpat_not-a-real-token")
    assert r.returncode == 2 and "refused the API token (401)" in r.stderr and "Traceback" not in r.stderr
    r = cli("runs", server="http://127.0.0.1:1", token=_token())
    assert r.returncode == 2 and "cannot reach http://127.0.0.1:1" in r.stderr and "Traceback" not in r.stderr
    r = cli("runs", server=url)
    assert r.returncode == 2 and "no API token" in r.stderr
    r = cli("export", "999999", server=url, token=_token())
    assert r.returncode == 2 and "404" in r.stderr and r.stdout == ""
    r = cli("wait", "999999", server=url, token=_token())
    assert r.returncode == 2 and "404" in r.stderr
