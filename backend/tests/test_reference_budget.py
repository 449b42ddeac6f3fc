"""POST /api/reference/parse parses in a child process with a CPU-time budget (app/reference/sandbox.py): a parse
that would run for minutes costs the API process nothing, and garbled input is a 422, never a 500."""
import time

from app.reference import sandbox


def spin(seconds: float) -> str:
    """A stand-in for a parser stuck in a backtracking pattern: CPU work for `seconds` (run in the child)."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return "done"


def test_a_parse_past_its_cpu_budget_is_killed_and_refused():
    start = time.monotonic()
    try:
        sandbox.run_limited(1, spin, 60.0)
    except sandbox.Refused as exc:
        assert "more than 1 s of CPU" in str(exc)
    else:
        raise AssertionError("a minute of CPU ran to the end")
    assert time.monotonic() - start < 10
    assert sandbox.run_limited(5, spin, 0.1) == "done"  # within the budget the answer comes back


def _post(client, tool, body: bytes):
    return client.post(f"/api/reference/parse?tool={tool}", content=body, headers={"content-type": "text/plain"})


def test_the_largest_upload_of_blank_lines_is_answered_at_once(client):
    """Before: a flood of blank lines cost STREAM's parser the square of its size (98 s of CPU for 512 KiB)."""
    from hostbench_common.reftools import MAX_UPLOAD_BYTES

    flood = b"\n" * (MAX_UPLOAD_BYTES // 2 - 100)
    start = time.monotonic()
    r = _post(client, "stream", flood + b"-------------------------------------------------------------\n" + flood)
    assert r.status_code == 422, r.text
    assert time.monotonic() - start < 10


def test_garbled_json_gets_422_not_500(client):
    r = _post(client, "fio", b'{"fio version": "fio-3.33", "jobs": [' + b"1" * 5000 + b"]}")
    assert r.status_code == 422, r.text
