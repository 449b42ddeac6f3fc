"""The read cache (app.core.readcache): a dashboard read made a moment ago is answered again from its bytes, in the
event loop, to a caller whose credential this process checked; a write anywhere drops what is kept, a revoked
credential is not answered from it, and what the runners change shows within the cache's life. Real PostgreSQL and
Redis (the cross-process message goes through Redis pub/sub)."""
import time

import pytest
from sqlalchemy import text

from app.core import broker
from app.core.config import get_settings
from app.core.readcache import CACHE, READS_CHANNEL
from app.users import service as users
from tests.conftest import make_user, wait_until

TTL_S = 2.0  # long enough for a step of a test on a loaded machine


@pytest.fixture
def cached(client):
    """The cache on (the tests run without it), and this client's subscription live."""
    s = get_settings()
    keep = s.hostbench_read_cache_s
    s.hostbench_read_cache_s = TTL_S
    try:
        client.get("/api/hosts")  # starts the subscription
        wait_until(lambda: _hit(client, "/api/hosts"), 10, "the read cache serving (its Redis subscription live)")
        yield client
    finally:
        s.hostbench_read_cache_s = keep


def _hit(client, path: str, headers: dict | None = None) -> bool:
    client.get(path, headers=headers)
    before = CACHE.hits
    client.get(path, headers=headers)
    return CACHE.hits == before + 1


def test_a_read_again_is_served_from_its_bytes_until_a_write(cached, runner, session):
    client = cached
    host_id, _ = runner
    first = client.get(f"/api/hosts/{host_id}")
    assert first.status_code == 200
    hits = CACHE.hits
    again = client.get(f"/api/hosts/{host_id}")
    assert CACHE.hits == hits + 1 and again.content == first.content
    # a change made behind the API's back (as a runner's or a Celery task's) shows within the cache's life
    session.execute(text("update hosts set hostname = 'changed.local' where id = :h"), {"h": host_id})
    session.commit()
    assert client.get(f"/api/hosts/{host_id}").json()["hostname"] == "test.local"  # still the kept answer
    time.sleep(TTL_S + 0.1)
    assert client.get(f"/api/hosts/{host_id}").json()["hostname"] == "changed.local"
    # a write through the API drops what is kept at once
    client.get(f"/api/hosts/{host_id}")
    r = client.patch(f"/api/hosts/{host_id}/labels", json={"region": "eu-9"})
    assert r.status_code == 200, r.text
    assert client.get(f"/api/hosts/{host_id}").json()["labels"]["region"] == "eu-9"
    # a write in another process says so on Redis: this one drops what it keeps
    wait_until(lambda: _hit(client, "/api/runs?limit=5"), 10, "the runs page served from the read cache")
    generation = CACHE.generation
    broker.publish(READS_CHANNEL, {"at": time.time()})
    wait_until(lambda: CACHE.generation > generation, 5, "the other process's write heard")
    hits = CACHE.hits
    client.get("/api/runs?limit=5")
    assert CACHE.hits == hits


def test_an_etag_is_answered_304_from_the_cache(cached, runner):
    client = cached
    path = "/api/runs?limit=5"
    first = client.get(path)
    etag = first.headers["etag"]
    hits = CACHE.hits
    r = client.get(path, headers={"If-None-Match": etag})
    assert r.status_code == 304 and r.headers["etag"] == etag and CACHE.hits == hits + 1
    # the hosts list's tag is weak (W/"..."): the browser sends it back as it came, and a cached copy answers 304
    # too (it answered 200: the weak prefix was taken off the tag sent, not off the one kept)
    hosts = client.get("/api/hosts?label=rack%3Dr07")
    weak = hosts.headers["etag"]
    assert weak.startswith('W/"')
    hits = CACHE.hits
    r = client.get("/api/hosts?label=rack%3Dr07", headers={"If-None-Match": weak})
    assert r.status_code == 304 and CACHE.hits == hits + 1


def test_a_caller_not_checked_or_revoked_goes_the_full_way(cached, session, runner):
    client = cached
    host_id, _ = runner
    path = f"/api/hosts/{host_id}"
    assert client.get(path).status_code == 200  # kept
    hits = CACHE.hits
    assert client.get(path, headers={"Authorization": "Bearer hbpat_nobody"}).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer runner-token"}).status_code == 401
    assert CACHE.hits == hits
    viewer = make_user(session, "cache-viewer", "viewer")
    session.commit()
    assert client.get(path, headers=viewer).status_code == 200  # checked in PostgreSQL, then cached
    wait_until(lambda: _hit(client, path, viewer), 10, "the viewer's read served from the read cache")
    # revoked by another process (no write through this one: what it keeps stays), the epoch moved in Redis
    session.execute(text("update api_tokens set revoked_at = now() where user_id = "
                         "(select id from users where name = 'cache-viewer')"))
    session.commit()
    users.credentials_changed()
    hits = CACHE.hits
    assert client.get(path, headers=viewer).status_code == 401
    assert CACHE.hits == hits
    # everyone's credential is checked in PostgreSQL again once (the epoch moved), then served from the cache again
    wait_until(lambda: _hit(client, path), 10, "served from the read cache again")


def test_a_run_s_change_of_state_drops_what_every_process_keeps(cached, runner, session):
    """A run started or ended by a runner's call (in a control process, which does not publish its writes) drops
    what every process keeps before the run's watchers hear of it: a page that re-reads on that event is not
    answered the state before."""
    from app.jobs import service
    from tests.test_light_reads import _jobs

    client = cached
    host_id, _ = runner
    run_id = _jobs(client, host_id, 1)[0]
    path = f"/api/runs/{run_id}"
    # the page kept (every wait for a hit in this file: on a loaded machine another write, such as the new job's own
    # queueing or a runner's call, may drop it between _hit's two reads, or its 2-s life pass; CI, 2026-11-29)
    wait_until(lambda: _hit(client, path), 10, f"{path} served from the read cache")
    generation = CACHE.generation
    service.publish_run(session, service.get_run(session, run_id))  # as finish_run does, wherever it runs
    assert CACHE.generation > generation
    hits = CACHE.hits
    client.get(path)
    assert CACHE.hits == hits


def test_a_burst_of_one_read_goes_the_full_way_once(cached, admin_headers):
    """Thirty simultaneous reads of the same page (nothing kept): one goes the full way, the others wait for its
    answer and are served it; without that, each took an admission slot (six) and most were refused 503."""
    import asyncio

    from app.main import app
    from tests.bench_read_cache import _get, _subscribed

    cached.get("/api/runs?limit=7")  # this caller's credential checked in this process

    async def burst() -> tuple[list[int], int]:
        await _subscribed(app, admin_headers)
        CACHE.changed()
        misses = CACHE.misses
        got = await asyncio.gather(*(_get(app, "/api/runs?limit=7", admin_headers) for _ in range(30)))
        return list(got), CACHE.misses - misses

    statuses, full_way = asyncio.run(burst())
    assert statuses == [200] * 30 and full_way == 1


def test_the_reads_waiting_on_a_refused_read_are_refused_at_once(cached, admin_headers, monkeypatch):
    """A burst of one read while every dashboard slot is taken (the process saturated): the read going the full way
    waits its while for a slot and is refused (503, Retry-After); the twenty that waited on it are each answered that
    refusal at once. They went the full way each after it, one by one: each waited for a slot again and was refused
    again (two waits per answer, twenty-one refusals by admission for one read).
    Each answer also says where its time went (HOSTBENCH_SERVER_TIMING, issue 31: what ./hostbench load's burst
    reports): the read that went the full way waited 0.5 s at admission (gate), the twenty waited for it in the read
    cache (cache) and never reached admission."""
    import asyncio

    from app.core.admission import GATES
    from app.main import app
    from tests.bench_read_cache import _get, _subscribed

    monkeypatch.setattr(get_settings(), "hostbench_server_timing", True)
    gate = GATES["dashboard"]
    monkeypatch.setattr(gate, "wait_s", 0.5)
    monkeypatch.setattr(gate, "_sem", None)  # a semaphore of this test's event loop, put back after
    path = "/api/runs?limit=9"
    cached.get(path)  # this caller's credential checked in this process

    async def burst() -> tuple[list[tuple[int, dict]], int, int, int]:
        await _subscribed(app, admin_headers)
        for _ in range(gate.slots):  # every slot taken, as by reads that do not end
            await gate.sem.acquire()
        try:
            CACHE.changed()
            misses, refused, by_gate = CACHE.misses, CACHE.refused, gate.refused

            async def one() -> tuple[int, dict]:
                headers: dict[bytes, bytes] = {}
                return await _get(app, path, admin_headers, headers), headers
            got = await asyncio.gather(*(one() for _ in range(21)))
            return got, CACHE.misses - misses, CACHE.refused - refused, gate.refused - by_gate
        finally:
            for _ in range(gate.slots):
                gate.sem.release()

    answers, full_way, handed, by_admission = asyncio.run(burst())
    assert [status for status, _ in answers] == [503] * 21
    assert all(headers.get(b"retry-after") == b"1" for _, headers in answers), answers
    assert (full_way, by_admission, handed) == (1, 1, 20)
    timings = [{p.split(";dur=")[0]: float(p.split(";dur=")[1]) for p in h[b"server-timing"].decode().split(", ")
                if ";dur=" in p} for _, h in answers]
    went, waited = [t for t in timings if "gate" in t], [t for t in timings if "gate" not in t]
    assert len(went) == 1 and went[0]["gate"] >= 450 and "app" not in went[0], went
    assert len(waited) == 20 and all(t["cache"] >= 400 and t["total"] >= t["cache"] for t in waited), waited
