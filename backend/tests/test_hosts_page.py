"""GET /api/hosts is a bounded page like every other list (issue 11: a fleet of a thousand hosts): `limit` at most
HOSTS_PAGE_MAX, `offset` to page on, and `count` the hosts in all."""
from app.hosts.router import HOSTS_PAGE_MAX


def _register(client, session, name: str) -> int:
    from app.hosts.service import create_registration_token

    token, _ = create_registration_token(session)
    r = client.post("/api/runners/register", json={"registration_token": token, "name": name,
                                                   "hostname": f"{name}.local", "version": "0"})
    assert r.status_code == 201, r.text
    return r.json()["host_id"]


def test_hosts_come_in_bounded_pages_that_cover_them_all(client, session):
    ids = {_register(client, session, f"page-host-{i}") for i in range(3)}
    whole = client.get("/api/hosts").json()
    assert whole["count"] == len(whole["data"]) >= 3
    seen: list[int] = []
    for offset in range(0, whole["count"], 2):
        page = client.get(f"/api/hosts?limit=2&offset={offset}").json()
        assert len(page["data"]) <= 2 and page["count"] == whole["count"]
        seen += [h["id"] for h in page["data"]]
    assert seen == [h["id"] for h in whole["data"]] and ids <= set(seen)  # in id order, each once


def test_a_page_beyond_the_bound_is_refused(client):
    for query in (f"limit={HOSTS_PAGE_MAX + 1}", "limit=0", "offset=-1", "limit=x"):
        r = client.get(f"/api/hosts?{query}")
        assert r.status_code == 422, (query, r.status_code, r.text)
