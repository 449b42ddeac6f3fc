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


def test_label_filters_match_the_snapshot_or_the_host_s_labels(client, session, runner):
    host_id, _ = runner
    a, b, c = _jobs(client, host_id, 3)
    session.execute(text("update runs set labels_snapshot = '{\"region\": \"eu\"}' where id = :id"), {"id": a})
    session.execute(text("update runs set labels_snapshot = '{\"region\": \"us\"}' where id = :id"), {"id": b})
    session.execute(text("update hosts set labels = '{\"region\": \"eu\", \"provider\": \"test\"}' where id = :id"),
                    {"id": host_id})
    session.commit()
    # a: handed out in eu; b: handed out in us (its host moved since); c: not handed out, its host is in eu now
    assert [r["id"] for r in client.get("/api/runs", params={"region": "eu"}).json()["data"]] == [c, a]
    assert [r["id"] for r in client.get("/api/runs", params={"region": "us"}).json()["data"]] == [b]
    # pages across both (the newest of each part, then the newest of both), by keyset and by offset, and counted
    first = client.get("/api/runs", params={"region": "eu", "limit": 1}).json()
    assert ([r["id"] for r in first["data"]], first["count"], first["next_before_id"]) == ([c], 2, c)
    assert [r["id"] for r in client.get("/api/runs", params={"region": "eu", "limit": 1, "before_id": c}).json()[
        "data"]] == [a]
    assert [r["id"] for r in client.get("/api/runs", params={"region": "eu", "limit": 1, "offset": 1}).json()[
        "data"]] == [a]
    # two labels at once: both in the snapshot, or both on the host of a run not handed out
    assert [r["id"] for r in client.get("/api/runs", params={"region": "eu", "provider": "test"}).json()[
        "data"]] == [c]


def test_a_label_page_reads_its_page_from_the_label_s_index(session):
    """History's page under a label reads the newest runs of the label as one backward range of the label's index,
    as many as the page shows, however many runs have the label: every statement the list runs is explained with
    ANALYZE on 30,000 runs, a tenth of them under the label. (The GIN index on the whole snapshot gave a bitmap of
    the label's every run, 3,000 here, each read and sorted for each page.)"""
    from sqlalchemy import event

    from app.core.db import get_engine

    session.execute(text("insert into hosts (name, hostname, runner_version, token_hash, registered_at, inventory, "
                         "labels) values ('fleet', 'fleet.local', '0', md5('fleet'), now(), '{}', '{}')"))
    session.execute(text("insert into jobs (created_at, experiment, params) "
                         "select now() - (30000 - i) * interval '1 minute', 'memory', '{}' "
                         "from generate_series(1, 30000) i"))
    session.execute(text("""insert into runs (job_id, host_id, experiment, params, status, attempt,
                                              expected_duration_s, created_at, cancel_requested, last_seq,
                                              labels_snapshot)
                            select j.id, h.id, 'memory', '{}', 'succeeded', 1, 60, j.created_at, false, -1,
                                   jsonb_build_object('instance_type', 'type-' || j.id % 10, 'region', 'eu-1')
                            from jobs j, hosts h"""))
    session.commit()
    with get_engine().connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("vacuum analyze runs")  # as autovacuum leaves a table of finished runs
    statements: list[tuple[str, object]] = []

    def record(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001, ANN202
        statements.append((statement, parameters))

    event.listen(get_engine(), "before_cursor_execute", record)
    try:
        for before_id in (None, 20_000):  # the first page, and one deeper by keyset
            page = service.list_runs(session, RunFilter(instance_type="type-3"), 50, before_id=before_id)
            assert len(page.data) == 50 and page.count == 3000
    finally:
        event.remove(get_engine(), "before_cursor_execute", record)
    pages = [(sql, params) for sql, params in statements if "ORDER BY runs.id DESC" in sql]
    assert len(pages) == 2, statements
    for sql, params in pages:
        plan = session.connection().exec_driver_sql(f"explain (analyze, format json) {sql}", params).scalar()
        nodes = list(_nodes(plan[0]["Plan"]))
        label = [n for n in nodes if n.get("Index Name") == "ix_runs_label_instance_type"]
        assert [n["Scan Direction"] for n in label] == ["Backward"], plan
        # each scan of runs (the label's range, then the page's rows by id) reads at most the page and the next one
        runs_read = [(n["Actual Rows"] + n.get("Rows Removed by Filter", 0)) * n["Actual Loops"] for n in nodes
                     if n.get("Relation Name") == "runs"]
        assert runs_read and max(runs_read) <= 51, plan
    session.rollback()


def _nodes(node: dict):  # noqa: ANN202 - a plan node and every node under it
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


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
