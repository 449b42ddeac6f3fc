"""The run status is declared once (hostbench_common.runstatus): the database holds the column to it, the API
publishes it as one schema, the dashboard's list of statuses matches it, a finished run does not move again, and no
production module writes its distinctive values as string literals."""
import re
from pathlib import Path

import pytest
from hostbench_common.runstatus import ACTIVE, TERMINAL, TRANSITIONS, RunStatus, may_move
from hostbench_stack.testing import PY_PACKAGES
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from app.core.errors import Conflict
from app.jobs.models import Run
from app.jobs.service import finish_run

ROOT = Path(__file__).resolve().parents[2]


def _job(client, host_id):
    r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu", "params": {}})
    assert r.status_code == 201, r.text
    return r.json()["runs"][0]["id"]


def test_the_database_refuses_a_status_the_enum_lacks(client, session, runner):
    run_id = _job(client, runner[0])
    with pytest.raises(IntegrityError, match="ck_runs_status"):
        session.execute(text("UPDATE runs SET status = 'paused' WHERE id = :id"), {"id": run_id})
    session.rollback()
    for status in RunStatus:  # and takes every value it has
        session.execute(text("UPDATE runs SET status = :s WHERE id = :id"), {"s": status.value, "id": run_id})
    session.rollback()


def test_the_constraint_in_the_database_names_the_enum_values(session):
    """Migration 0022 writes the values as of its revision; a status added later needs its own migration."""
    definition = session.scalar(text("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = "
                                      "'ck_runs_status'"))
    assert definition is not None
    assert set(re.findall(r"'(\w+)'", definition)) == {s.value for s in RunStatus}


def test_a_finished_run_does_not_move_again(client, session, runner):
    run_id = _job(client, runner[0])
    assert client.post(f"/api/runs/{run_id}/cancel").json()["status"] == RunStatus.cancelled
    run = session.get(Run, run_id)
    with pytest.raises(Conflict, match="cannot become failed"):
        finish_run(session, run, RunStatus.failed, "late")
    session.expire_all()
    assert session.get(Run, run_id).status == RunStatus.cancelled


def test_transitions_are_complete_and_end_at_the_terminal_states():
    assert set(TRANSITIONS) == set(RunStatus)
    assert all(not TRANSITIONS[s] for s in TERMINAL)
    assert set(ACTIVE) | set(TERMINAL) == set(RunStatus) and not set(ACTIVE) & set(TERMINAL)
    assert may_move("queued", "dispatched") and may_move("running", "untrusted")
    assert not may_move("queued", "running") and not may_move("succeeded", "failed")


def test_the_api_publishes_one_run_status_schema():
    from app.main import app

    schema = app.openapi()
    assert schema["components"]["schemas"]["RunStatus"]["enum"] == [s.value for s in RunStatus]
    runs_query = {p["name"]: p for p in schema["paths"]["/api/runs"]["get"]["parameters"]}
    assert {"$ref": "#/components/schemas/RunStatus"} in runs_query["status"]["schema"]["anyOf"]


def test_the_dashboards_statuses_are_the_enums():
    """frontend/src/lib/api/types.ts lists each status of the generated union with whether it is active."""
    types = (ROOT / "frontend" / "src" / "lib" / "api" / "types.ts").read_text()
    block = re.search(r"STATUS_ACTIVE: Record<RunStatus, boolean> = \{(.*?)\};", types, re.S)
    assert block, "STATUS_ACTIVE not found in types.ts"
    active = dict(re.findall(r"(\w+): (true|false)", block.group(1)))
    assert list(active) == [s.value for s in RunStatus]
    assert {s for s, a in active.items() if a == "true"} == {s.value for s in ACTIVE}


# The values no other status shares (a suite, a schedule firing and a reference tool also have "running",
# "failed", "succeeded" or "cancelled"): written only in hostbench_common/runstatus.py and the migration.
DISTINCT = re.compile(r"""["'](queued|dispatched|untrusted)["'](?!\s*:)""")  # not a dict key ("dispatched": 3)
ALLOWED = {"common/hostbench_common/runstatus.py",
           "runner/hostbench_runner/protocol.py",  # the kernel's end event says "ok" or "untrusted" (its protocol)
           "runner/hostbench_runner/runstate.py"}  # reads that event


def test_no_production_module_spells_the_status_out():
    found = []
    for folder, package in PY_PACKAGES:
        for path in sorted((ROOT / folder / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in ALLOWED:
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                if DISTINCT.search(code) and '"""' not in code:
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert found == [], "use hostbench_common.runstatus.RunStatus:\n" + "\n".join(found)
