"""A running benchmark's calls write the host's last_seen_at at most every SEEN_EVERY_S (issue 11: not one
UPDATE of the hosts table per batch of samples); a heartbeat always writes it."""
from datetime import timedelta

from app.core.db import utcnow
from app.hosts.models import Host
from app.runner_api.service import SEEN_EVERY_S, note_seen


def test_a_call_marks_the_host_seen_unless_it_was_marked_just_now() -> None:
    host = Host(name="h", hostname="h")
    note_seen(host)
    assert host.last_seen_at is not None
    first = host.last_seen_at
    note_seen(host)
    assert host.last_seen_at == first  # within SEEN_EVERY_S: not written again

    host.last_seen_at = utcnow() - timedelta(seconds=SEEN_EVERY_S + 0.5)
    stale = host.last_seen_at
    note_seen(host)
    assert host.last_seen_at > stale
    assert utcnow() - host.last_seen_at < timedelta(seconds=1)
