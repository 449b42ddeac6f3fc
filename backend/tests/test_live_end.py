"""Against a real API process: a live stream's `end` waits for the last samples of a run the server ended. The
server may end a run whose runner still holds samples (a cancel, a lease that ran out while the API was away); the
runner uploads them after the end and then says `closed`. Before, the stream ended at once and never sent them:
chaos `api-kill` in CI, 3 stored samples the following client never got."""
import os
import queue
import time
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import update

from app.core.db import utcnow
from app.jobs.models import Run
from app.live.router import CLOSE_WAIT_S
from tests.apiproc import api_process
from tests.conftest import make_user
from tests.test_api_processes import _sample
from tests.test_live_revocation import open_stream, running


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with api_process(tmp_path_factory.mktemp("api") / "api.log", dict(os.environ, PYTHONUNBUFFERED="1")) as base:
        yield base


def _post(api: str, run_id: int, runner: dict, attempt: int, seqs: range) -> None:
    r = httpx.post(f"{api}/api/runner/runs/{run_id}/samples", headers=runner,
                   json={"attempt": attempt, "samples": [_sample(i) for i in seqs]})
    assert r.status_code == 200 and r.json()["inserted"] == len(seqs), r.text


def _until(out: queue.Queue, kind: str, timeout_s: float) -> tuple[list[int], dict | None]:
    """The samples' seqs received until an event of `kind` (its data), or until timeout_s (None)."""
    seqs: list[int] = []
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        try:
            event, data, _ = out.get(timeout=left)
        except queue.Empty:
            break
        if event == "sample":
            seqs.append(data["seq"])
        elif event == kind:
            return seqs, data
    return seqs, None


def test_the_end_of_a_run_the_server_ended_waits_for_its_runners_closed(api, session):
    admin = make_user(session, "close-admin", "admin")
    run_id, runner, attempt = running(api, session, admin, "close-host")
    _post(api, run_id, runner, attempt, range(3))
    r = httpx.post(f"{api}/api/runs/{run_id}/cancel", headers=admin)
    assert r.status_code == 202 and r.json()["status"] == "cancelled", r.text

    out = open_stream(api, run_id, admin)
    seqs, end = _until(out, "end", 2.5)
    assert seqs == [0, 1, 2] and end is None  # ended, but its runner has not said it sent everything

    _post(api, run_id, runner, attempt, range(3, 5))  # what the runner spooled comes after the end
    late, end = _until(out, "end", 1.0)
    assert late == [3, 4] and end is None
    stale = httpx.post(f"{api}/api/runner/runs/{run_id}/closed", headers=runner, json={"attempt": attempt + 1})
    assert stale.status_code == 409, stale.text
    sent = time.monotonic()
    r = httpx.post(f"{api}/api/runner/runs/{run_id}/closed", headers=runner, json={"attempt": attempt})
    assert r.status_code == 200 and r.json() == {"ok": True}, r.text
    more, end = _until(out, "end", 5.0)
    assert more == [] and end is not None and time.monotonic() - sent < 3.0
    assert end["status"] == "cancelled" and end["samples_complete"] is True
    assert httpx.post(f"{api}/api/runner/runs/{run_id}/closed", headers=runner,
                      json={"attempt": attempt}).status_code == 200  # idempotent

    again = open_stream(api, run_id, admin)  # a later visit: everything, and the end at once
    seqs, end = _until(again, "end", 5.0)
    assert seqs == [0, 1, 2, 3, 4] and end is not None and end["samples_complete"] is True


def test_a_stream_ends_when_the_wait_has_passed_and_says_samples_may_be_missing(api, session):
    admin = make_user(session, "close-wait-admin", "admin")
    run_id, runner, attempt = running(api, session, admin, "close-wait-host")
    _post(api, run_id, runner, attempt, range(2))
    assert httpx.post(f"{api}/api/runs/{run_id}/cancel", headers=admin).status_code == 202
    # the run ended longer ago than the wait: its host never said `closed` (it died, say)
    session.execute(update(Run).where(Run.id == run_id)
                    .values(finished_at=utcnow() - timedelta(seconds=CLOSE_WAIT_S + 1)))
    session.commit()
    seqs, end = _until(open_stream(api, run_id, admin), "end", 5.0)
    assert seqs == [0, 1] and end is not None and end["samples_complete"] is False


def test_closed_is_the_owning_runners_alone(api, session):
    admin = make_user(session, "close-owner-admin", "admin")
    run_id, _, attempt = running(api, session, admin, "close-owner-host")
    _, other, _ = running(api, session, admin, "close-other-host")
    for headers, want in (({}, 401), (admin, 401), (other, 404)):
        r = httpx.post(f"{api}/api/runner/runs/{run_id}/closed", headers=headers, json={"attempt": attempt})
        assert r.status_code == want, (headers, r.status_code, r.text)
    for body in ({}, {"attempt": 0}, {"attempt": "1"}, {"attempt": 1, "extra": 1}):
        r = httpx.post(f"{api}/api/runner/runs/{run_id}/closed", headers=other, json=body)
        assert r.status_code == 422, (body, r.status_code, r.text)
