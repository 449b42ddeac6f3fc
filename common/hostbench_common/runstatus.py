"""A run's status, the one definition: its values, which are terminal, and which moves are allowed.

The backend stores it (`runs.status`, a CHECK constraint holds the column to these values; migration 0022 and
backend/tests/test_run_status.py), the API publishes it as the `RunStatus` schema of the OpenAPI document (from
which the dashboard's TypeScript union is generated), the runner reports the terminal ones it may, and the CLI
waits for them.

    queued -> dispatched -> running -> succeeded | untrusted | failed | cancelled
    queued, dispatched -> failed | cancelled          (refused, cancelled, its host retired or silent)
    dispatched -> succeeded | untrusted               (a runner's finish, its start report lost)
"""
from enum import Enum


class RunStatus(str, Enum):
    """A run's status: queued, dispatched (handed to its runner), running, then succeeded, untrusted (measured, a
    check failed), failed or cancelled."""

    # Member names are the values: a member equals, hashes and prints as its value.

    queued = "queued"
    dispatched = "dispatched"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    untrusted = "untrusted"
    cancelled = "cancelled"

    def __str__(self) -> str:  # f"{status}" is the value on every Python (3.11 changed format() of mixins)
        return str(self.value)


# Not finished: waiting for its host, handed to its runner, or executing.
ACTIVE: tuple[RunStatus, ...] = (RunStatus.queued, RunStatus.dispatched, RunStatus.running)
# On its host: handed to its runner or executing (the host is busy; a lease runs).
ON_HOST: tuple[RunStatus, ...] = (RunStatus.dispatched, RunStatus.running)
# Finished; nothing moves it again.
TERMINAL: tuple[RunStatus, ...] = (RunStatus.succeeded, RunStatus.failed, RunStatus.untrusted, RunStatus.cancelled)
# Finished with a result whose figures count (untrusted: measured, one check failed; shown, flagged).
WITH_RESULT: tuple[RunStatus, ...] = (RunStatus.succeeded, RunStatus.untrusted)

TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.queued: frozenset({RunStatus.dispatched, RunStatus.failed, RunStatus.cancelled}),
    RunStatus.dispatched: frozenset({RunStatus.running, *TERMINAL}),
    RunStatus.running: frozenset(TERMINAL),
    **{s: frozenset() for s in TERMINAL},
}


def may_move(old: str, new: str) -> bool:
    """Whether a run in `old` may move to `new` (TRANSITIONS)."""
    return RunStatus(new) in TRANSITIONS[RunStatus(old)]
