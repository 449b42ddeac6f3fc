"""The reconciler does not depend on Celery beat: a real API process, with no worker and no beat anywhere, fails a
run whose runner went silent within a few reconcile periods (app.reconciler.reconcile_loop,
docs/reliability.md rule 1)."""
import os
import time
from datetime import timedelta

from app.core.db import utcnow
from app.jobs.models import Run
from tests.apiproc import api_process
from tests.test_runner_flow import KERNEL_INFO, _claim, _job


def test_an_api_process_alone_expires_a_silent_runners_lease(client, session, runner, tmp_path):
    host_id, headers = runner
    run_id = _job(client, host_id)
    _claim(client, session, host_id, headers)
    client.post(f"/api/runner/runs/{run_id}/start", json={"attempt": 1, "kernel_info": KERNEL_INFO}, headers=headers)
    env = dict(os.environ, API_RECONCILE="true", RECONCILE_S="0.5", PYTHONUNBUFFERED="1")
    with api_process(tmp_path / "api.log", env):
        # its first passes find the last one long ago (a gap: leases renewed); once it has been watching, the lease
        # runs out
        time.sleep(2)
        session.get(Run, run_id).lease_expires_at = utcnow() - timedelta(seconds=1)
        session.commit()
        deadline = time.monotonic() + 15
        status = None
        while time.monotonic() < deadline:
            session.expire_all()
            status = session.get(Run, run_id).status
            if status == "failed":
                break
            time.sleep(0.2)
    assert status == "failed", (tmp_path / "api.log").read_text()[-2000:]
    assert session.get(Run, run_id).status_reason.startswith("runner went silent")
