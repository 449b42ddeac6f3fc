"""Light reads (issue 31): run lists page by keyset and stay put while runs are added, count exactly up to a bound
and then say "more than", filter by label through an index, and answer 304 to an unchanged ETag."""
from sqlalchemy import text

from app.jobs import service
from app.jobs.schemas import RunFilter


def _jobs(client, host_id: int, n: int) -> list[int]:
    ids = []
    for _ in range(n):
        r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu",
                                           "params": {"threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}})
        assert r.status_code == 201, r.text
        ids.append(r.json()["runs"][0]["id"])
    return ids


def test_keyset_pages_stay_put_while_runs_are_added(client, runner):
    host_id, _ = runner
    ids = _jobs(client, host_id, 5)
    first = client.get("/api/runs", params={"limit": 2}).json()
    assert [r["id"] for r in first["data"]] == ids[:-3:-1] and first["next_before_id"] == ids[3]
    _jobs(client, host_id, 2)  # two newer runs arrive between the pages
    second = client.get("/api/runs", params={"limit": 2, "before_id": first["next_before_id"]}).json()
    assert [r["id"] for r in second["data"]] == [ids[2], ids[1]]
    last = client.get("/api/runs", params={"limit": 2, "before_id": second["next_before_id"]}).json()
    assert [r["id"] for r in last["data"]] == [ids[0]] and last["next_before_id"] is None
    # the old parameter still works (deprecated in the document): OFFSET's page moved by the two new runs
    assert [r["id"] for r in client.get("/api/runs", params={"limit": 2, "offset": 2}).json()["data"]] == \
        [ids[4], ids[3]]
    doc = client.get("/openapi.json").json()["paths"]["/api/runs"]["get"]["parameters"]
    assert next(p for p in doc if p["name"] == "offset")["deprecated"] is True


def test_a_count_is_exact_up_to_its_bound_then_more_than(client, runner, monkeypatch):
    host_id, _ = runner
    _jobs(client, host_id, 4)
    assert client.get("/api/runs").json()["count"] == 4
    monkeypatch.setattr(service, "COUNT_BOUND", 3)
    page = client.get("/api/runs", params={"host_id": host_id, "limit": 1}).json()
    assert (page["count"], page["count_more"], len(page["data"])) == (3, True, 1)


def test_label_filters_match_the_snapshot_or_the_host_s_labels_through_indexes(client, session, runner):
    host_id, _ = runner
    a, b, c = _jobs(client, host_id, 3)
    session.execute(text("update runs set labels_snapshot = '{\"region\": \"eu\"}' where id = :id"), {"id": a})
    session.execute(text("update runs set labels_snapshot = '{\"region\": \"us\"}' where id = :id"), {"id": b})
    session.execute(text("update hosts set labels = '{\"region\": \"eu\"}' where id = :id"), {"id": host_id})
    session.commit()
    # a: handed out in eu; b: handed out in us (its host moved since); c: not handed out, its host is in eu now
    assert [r["id"] for r in client.get("/api/runs", params={"region": "eu"}).json()["data"]] == [c, a]
    assert [r["id"] for r in client.get("/api/runs", params={"region": "us"}).json()["data"]] == [b]
    # a label filter is served by indexes (GIN on the snapshot, and the runs not handed out yet), as History's other
    # filters (host, experiment, status, created) are by theirs: the plan with sequential scans ruled out names them
    q = service.runs_query(RunFilter(region="eu"))
    sql = str(q.with_only_columns(text("runs.id")).compile(session.get_bind(), compile_kwargs={"literal_binds": True}))
    session.execute(text("set local enable_seqscan = off"))
    plan = "\n".join(r[0] for r in session.execute(text(f"explain {sql}")))
    session.rollback()
    assert "ix_runs_labels_snapshot" in plan and "ix_runs_unlabelled" in plan, plan


def test_an_unchanged_run_or_list_costs_a_304(client, runner):
    host_id, _ = runner
    run_id = _jobs(client, host_id, 1)[0]
    assert client.post(f"/api/runs/{run_id}/cancel").status_code == 202  # ended: tagged by what it is made of
    r = client.get(f"/api/runs/{run_id}")
    tag = r.headers["etag"]
    assert r.status_code == 200 and r.headers["cache-control"] == "private, no-cache"
    again = client.get(f"/api/runs/{run_id}", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    assert client.get(f"/api/runs/{run_id}", headers={"If-None-Match": f'W/"x", {tag}'}).status_code == 304
    listed = client.get("/api/runs")
    assert client.get("/api/runs", headers={"If-None-Match": listed.headers["etag"]}).status_code == 304
    # a peak entered for the host changes what the run's result is computed against: a new tag
    assert client.put(f"/api/hosts/{host_id}/peaks/cpu_fp64", json={"value": 99.0}).status_code == 200
    assert client.get(f"/api/runs/{run_id}", headers={"If-None-Match": tag}).status_code == 200
    _jobs(client, host_id, 1)
    assert client.get("/api/runs", headers={"If-None-Match": listed.headers["etag"]}).status_code == 200
