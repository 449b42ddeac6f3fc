"""The hosts list at fleet size (issue 32): GET /api/hosts searches, filters by label, status and CPU, sorts and pages
in PostgreSQL; /api/hosts/facets says what the filters can pick; an unchanged list answers 304 to its ETag."""
from datetime import timedelta

from app.core.db import utcnow
from app.hosts.models import Host

CPUS = ("AMD EPYC 9654", "Intel Xeon Gold 6430", "AMD EPYC 9654")


def _fleet(client, session) -> dict[str, int]:
    """Three hosts with different CPUs, core counts, memory and labels, all registered through the API."""
    from app.hosts.service import create_registration_token

    ids = {}
    for i, (name, model) in enumerate(zip(("rack-b-2", "Rack-A-1", "rack-c-3"), CPUS, strict=True)):
        token, _ = create_registration_token(session)
        inventory = {"cpu": {"model": model, "sockets": 1, "cores_per_socket": 8 * (i + 1)},
                     "memory": {"total_bytes": (3 - i) * 2**30}}
        r = client.post("/api/runners/register", json={
            "registration_token": token, "name": name, "hostname": f"{name}.lab", "version": "0",
            "inventory": inventory, "labels": {"rack": name[5], "role": "db" if i == 1 else "web"}})
        assert r.status_code == 201, r.text
        ids[name] = r.json()["host_id"]
    # rack-c-3 went quiet long ago: offline
    session.get(Host, ids["rack-c-3"]).last_seen_at = utcnow() - timedelta(days=1)
    session.commit()
    return ids


def _names(client, query: str) -> list[str]:
    r = client.get(f"/api/hosts?{query}")
    assert r.status_code == 200, r.text
    return [h["name"] for h in r.json()["data"]]


def test_search_filters_and_sort_are_the_servers(client, session):
    _fleet(client, session)
    assert _names(client, "sort=name") == ["Rack-A-1", "rack-b-2", "rack-c-3"]  # whatever the case
    assert _names(client, "sort=name&order=desc") == ["rack-c-3", "rack-b-2", "Rack-A-1"]
    assert _names(client, "sort=cores&order=desc") == ["rack-c-3", "Rack-A-1", "rack-b-2"]
    assert _names(client, "sort=memory") == ["rack-c-3", "Rack-A-1", "rack-b-2"]
    assert _names(client, "sort=status") == ["rack-b-2", "Rack-A-1", "rack-c-3"]  # online first
    assert _names(client, "q=xeon") == ["Rack-A-1"]  # the CPU model, any case
    assert _names(client, "q=c-3.lab") == ["rack-c-3"]  # the host name
    assert _names(client, "q=100%25") == []  # % is a character, not a wildcard
    assert _names(client, "label=role%3Dweb&sort=name") == ["rack-b-2", "rack-c-3"]
    assert _names(client, "label=role%3Dweb&label=rack%3Dc") == ["rack-c-3"]  # every one must match
    assert _names(client, "status=offline") == ["rack-c-3"]
    assert _names(client, "status=online&sort=name") == ["Rack-A-1", "rack-b-2"]
    assert _names(client, "cpu=AMD%20EPYC%209654&sort=name") == ["rack-b-2", "rack-c-3"]
    page = client.get("/api/hosts?sort=name&limit=1&offset=1").json()
    assert [h["name"] for h in page["data"]] == ["rack-b-2"] and page["count"] == 3
    assert client.get("/api/hosts?label=role%3Dweb&limit=1").json()["count"] == 2


def test_bad_list_parameters_are_a_422(client):
    for query in ("sort=colour", "order=up", "status=asleep", "label=novalue", "label=%3Dx", "q=" + "x" * 129,
                  "&".join(["label=a%3Db"] * 9)):
        r = client.get(f"/api/hosts?{query}")
        assert r.status_code == 422, (query, r.status_code, r.text)


def test_facets_count_what_each_filter_would_show(client, session):
    _fleet(client, session)
    f = client.get("/api/hosts/facets").json()
    assert f["count"] == 3 and f["statuses"] == {"online": 2, "offline": 1, "revoked": 0}
    assert f["cpus"] == [{"value": "AMD EPYC 9654", "count": 2}, {"value": "Intel Xeon Gold 6430", "count": 1}]
    assert {"key": "role", "value": "web", "count": 2} in f["labels"]
    assert {(x["key"], x["value"]) for x in f["labels"] if x["key"] == "rack"} == {("rack", "b"), ("rack", "A"),
                                                                                   ("rack", "c")}


def test_an_unchanged_list_is_a_304_and_a_change_a_new_etag(client, session):
    ids = _fleet(client, session)
    first = client.get("/api/hosts?sort=name")
    tag = first.headers["etag"]
    assert first.headers["cache-control"] == "private, no-cache"
    again = client.get("/api/hosts?sort=name", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    r = client.patch(f"/api/hosts/{ids['rack-b-2']}/labels", json={"region": "eu-1"})
    assert r.status_code == 200, r.text
    changed = client.get("/api/hosts?sort=name", headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["etag"] != tag
    assert {h["name"]: h["labels"].get("region") for h in changed.json()["data"]}["rack-b-2"] == "eu-1"


def test_a_heartbeat_within_the_minute_leaves_the_list_unchanged(client, session):
    """A fleet's runners heartbeat all the time: in the list, last_seen_at is to the minute (a host's own GET has it
    exactly), so a poll answers 304 until a host's minute, status or facts change."""
    ids = _fleet(client, session)
    host = session.get(Host, ids["rack-b-2"])
    minute = utcnow().replace(second=0, microsecond=0)
    host.last_seen_at = minute + timedelta(seconds=1)
    session.commit()
    first = client.get("/api/hosts?sort=name")
    assert {h["name"]: h["last_seen_at"] for h in first.json()["data"]}["rack-b-2"].startswith(
        minute.strftime("%Y-%m-%dT%H:%M:00"))
    host.last_seen_at = minute + timedelta(seconds=2)
    session.commit()
    assert client.get("/api/hosts?sort=name", headers={"If-None-Match": first.headers["etag"]}).status_code == 304
    assert client.get(f"/api/hosts/{ids['rack-b-2']}").json()["last_seen_at"].startswith(
        (minute + timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:02"))
    host.last_seen_at = minute - timedelta(seconds=58)
    session.commit()
    assert client.get("/api/hosts?sort=name", headers={"If-None-Match": first.headers["etag"]}).status_code == 200
