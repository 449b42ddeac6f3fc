"""Hosts tested together (app.mesh): all pairs in rounds of the circle method, many clients to one server, the
matrix. Runners are simulated through the runner API on the real server (PostgreSQL, the dispatcher); the same
flows on real runner processes in network namespaces: tests/test_integration_mesh.py."""
import itertools

import pytest
from sqlalchemy import select

from app.jobs.mesh_models import MeshJob
from app.jobs.models import ACTIVE, Run
from app.jobs.rounds import circle
from tests.conftest import make_user
from tests.test_network_pair import PARAMS, _register, _set_address
from tests.test_pair_crossing import _ask

STREAM = {k: v for k, v in PARAMS.items() if k != "op"}


@pytest.mark.parametrize("n", range(2, 17))
@pytest.mark.parametrize("both_ways", [False, True])
def test_circle_meets_every_pair_once_and_no_host_twice_a_round(n, both_ways):
    hosts = list(range(100, 100 + n))
    rounds = circle(hosts, both_ways)
    per_way = n - 1 if n % 2 == 0 else n
    assert len(rounds) == per_way * (2 if both_ways else 1)
    for pairs in rounds:
        used = [h for pair in pairs for h in pair]
        assert len(used) == len(set(used)), f"a host twice in one round: {pairs}"
        assert len(pairs) == n // 2
    met = [pair for pairs in rounds for pair in pairs]
    if both_ways:
        assert sorted(met) == sorted(itertools.permutations(hosts, 2))
    else:
        assert sorted(tuple(sorted(p)) for p in met) == sorted(itertools.combinations(hosts, 2))
        serves = [s for s, _ in met]
        assert max(serves.count(h) for h in hosts) - min(serves.count(h) for h in hosts) <= 2


def _hosts(client, session, n):
    out = []
    for i in range(n):
        host_id, headers = _register(client, session, f"mesh-{i}")
        _set_address(session, host_id, f"10.9.1.{i + 1}")
        out.append((host_id, headers))
    return out


def _round_of(session, run_id):
    run = session.get(Run, run_id)
    return session.scalar(select(MeshJob.round).where(MeshJob.job_id == run.job_id))


def _drive_all(client, session, hosts, mbps, *, on_step=None, limit=400):
    """Play every runner until nothing is left: a serve run starts and listens, a drive run starts and finishes
    with `mbps(server_host, client_host)`. Returns how many steps it took; fails on a step that moved nothing
    (a deadlock)."""
    headers = dict(hosts)
    port = 42000
    for step in range(limit):
        moved = False
        for host_id, h in hosts:
            g = _ask(client, session, host_id, h)
            if g is None:
                continue
            moved = True
            client.post(f"/api/runner/runs/{g['run_id']}/start", json={"attempt": g["attempt"], "kernel_info": {}},
                        headers=h)
            if g["experiment"] == "network_serve":
                port += 1
                r = client.post(f"/api/runner/runs/{g['run_id']}/listening",
                                json={"attempt": g["attempt"], "port": port}, headers=h)
                assert r.status_code == 200, r.text
        session.expire_all()
        if on_step is not None:
            on_step()
        drives = session.scalars(select(Run).where(Run.experiment == "network_drive",
                                                   Run.status.in_(("dispatched", "running")),
                                                   Run.attempt >= 1)).all()
        for d in drives:
            serve = session.get(Run, d.params["server_run_id"])
            result = {"threads": 1, "repeat": 1, "value": mbps(serve.host_id, d.host_id), "unit": "Mbit/s",
                      "verified": True, "op": "tcp_stream", "block_bytes": PARAMS["sizes"][0]}
            r = client.post(f"/api/runner/runs/{d.id}/finish", json={"attempt": d.attempt, "status": "succeeded",
                                                                    "results": [result]}, headers=headers[d.host_id])
            assert r.status_code == 200, r.text
            moved = True
        session.expire_all()
        if not session.scalars(select(Run.id).where(Run.status.in_(ACTIVE))).first():
            return step
        assert moved, "deadlock: no host could start anything"
    raise AssertionError("the mesh did not finish")


@pytest.mark.parametrize("n,mode", [(5, "all_pairs"), (4, "all_pairs_both_ways")])
def test_all_pairs_run_in_rounds_and_name_the_slowest_link(client, session, n, mode):
    hosts = _hosts(client, session, n)
    ids = [h for h, _ in hosts]
    slow = (ids[1], ids[3]) if mode == "all_pairs_both_ways" else None
    r = client.post("/api/meshes", json={"mode": mode, "host_ids": ids, "ops": ["tcp_stream"], "params": STREAM})
    assert r.status_code == 201, r.text
    mesh = r.json()
    assert mesh["rounds"] == (n if n % 2 else (n - 1) * 2) and mesh["status"] == "queued"
    seen_rounds: list[int] = []

    def one_round_at_a_time():
        on = session.scalars(select(Run.id).where(Run.status.in_(("dispatched", "running")))).all()
        rounds = {_round_of(session, i) for i in on}
        assert len(rounds) <= 1, f"runs of rounds {sorted(rounds)} at once"
        seen_rounds.extend(rounds)

    def mbps(server, client_):
        if slow is None:  # one way: the link 1 - 3, whichever way it was measured
            return 100.0 if {server, client_} == {ids[1], ids[3]} else 9000.0 + server
        return 100.0 if (server, client_) == slow else 9000.0 + server

    _drive_all(client, session, hosts, mbps, on_step=one_round_at_a_time)
    assert sorted(set(seen_rounds)) == list(range(mesh["rounds"]))
    m = client.get(f"/api/meshes/{mesh['id']}").json()
    assert m["status"] == "done" and m["runs"] == {"succeeded": 2 * len(m["cells"])}
    assert len(m["cells"]) == (n * (n - 1) if mode == "all_pairs_both_ways" else n * (n - 1) // 2)
    assert {c["status"] for c in m["cells"]} == {"succeeded"}
    link = m["slowest_link"]
    assert link["mbps"] == 100.0
    assert {link["server_host_id"], link["client_host_id"]} == {ids[1], ids[3]}
    assert m["slowest_host"]["host_id"] in (ids[1], ids[3])
    # no band judge yet: every valid cell is NO BASELINE, with its validity verdict beside it
    assert {(c["verdict"], c["validity"]) for c in m["cells"]} == {("NO BASELINE", "valid")}
    csv = client.get(f"/api/meshes/{mesh['id']}/export?format=csv")
    assert csv.status_code == 200 and csv.headers["content-type"].startswith("text/csv")
    lines = csv.text.strip().splitlines()
    assert lines[0].startswith("server_host_id,server,client_host_id,client,round") and len(lines) == 1 + len(m["cells"])
    assert any(",100.0," in line for line in lines[1:])


def test_many_to_one_serves_every_client_at_once(client, session, monkeypatch):
    from app.jobs import service

    rung: list[int] = []
    monkeypatch.setattr(service, "ring", rung.append)
    hosts = _hosts(client, session, 4)
    (server, s_headers), clients = hosts[0], hosts[1:]
    # a client busy with something else: the server waits until every driver can start
    cpu = {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}
    busy = client.post("/api/jobs", json={"host_ids": [clients[0][0]], "experiment": "cpu", "params": cpu}).json()
    g = _ask(client, session, clients[0][0], clients[0][1])
    assert g["run_id"] == busy["runs"][0]["id"]
    r = client.post("/api/meshes", json={"mode": "many_to_one", "server_host_id": server, "ops": ["tcp_stream"],
                                         "host_ids": [c for c, _ in clients], "params": STREAM})
    assert r.status_code == 201, r.text
    mesh_id = r.json()["id"]
    runs = session.scalars(select(Run).where(Run.experiment != "cpu").order_by(Run.id)).all()
    assert [r.experiment for r in runs] == ["network_serve"] + ["network_drive"] * 3
    assert len({r.job_id for r in runs}) == 1  # one job: one server, three drivers
    assert _ask(client, session, server, s_headers) is None
    rung.clear()
    client.post(f"/api/runner/runs/{g['run_id']}/finish", json={"attempt": g["attempt"], "status": "failed",
                                                                "reason": "test"}, headers=clients[0][1])
    assert server in rung  # the busy client is free: the server is asked again
    _drive_all(client, session, hosts, lambda s, c: 1000.0 * (c - server))
    m = client.get(f"/api/meshes/{mesh_id}").json()
    assert m["status"] == "done" and m["server"]["id"] == server
    figures = {c["client_host_id"]: c["mbps"] for c in m["cells"]}
    assert figures == {c: 1000.0 * (c - server) for c, _ in clients}
    assert m["aggregate_mbps"] == sum(figures.values())
    assert sum(c["share"] for c in m["cells"]) == pytest.approx(1.0)
    assert m["slowest_link"]["client_host_id"] == clients[0][0] == m["slowest_host"]["host_id"]
    serve = session.scalars(select(Run).where(Run.experiment == "network_serve")).one()
    assert serve.status == "succeeded"  # ended with its last driver, not its first


def test_many_to_one_the_first_driver_to_end_leaves_the_server_serving(client, session):
    hosts = _hosts(client, session, 3)
    (server, s_headers), clients = hosts[0], hosts[1:]
    r = client.post("/api/meshes", json={"mode": "many_to_one", "server_host_id": server, "ops": ["tcp_stream"],
                                         "host_ids": [c for c, _ in clients], "params": STREAM})
    assert r.status_code == 201, r.text
    g = _ask(client, session, server, s_headers)
    client.post(f"/api/runner/runs/{g['run_id']}/start", json={"attempt": g["attempt"], "kernel_info": {}},
                headers=s_headers)
    client.post(f"/api/runner/runs/{g['run_id']}/listening", json={"attempt": g["attempt"], "port": 43000},
                headers=s_headers)
    got = [_ask(client, session, c, h) for c, h in clients]
    assert [x["experiment"] for x in got] == ["network_drive"] * 2
    assert {x["params"]["port"] for x in got} == {43000}
    first = got[0]
    client.post(f"/api/runner/runs/{first['run_id']}/finish", json={"attempt": first["attempt"], "status": "failed",
                                                                    "reason": "test"}, headers=clients[0][1])
    session.expire_all()
    assert session.get(Run, g["run_id"]).status == "running"  # still serving the other client
    assert session.get(Run, got[1]["run_id"]).status != "failed"
    # the server ending first fails the drivers still on
    client.post(f"/api/runner/runs/{g['run_id']}/finish", json={"attempt": g["attempt"], "status": "failed",
                                                                "reason": "test"}, headers=s_headers)
    session.expire_all()
    assert session.get(Run, got[1]["run_id"]).status == "failed"


@pytest.mark.parametrize("body,where", [
    ({"mode": "many_to_one", "host_ids": [1, 2]}, "server_host_id"),
    ({"mode": "many_to_one", "host_ids": [1, 2], "server_host_id": 1}, "cannot also be one of the clients"),
    ({"mode": "all_pairs", "host_ids": [1, 2], "server_host_id": 3}, "many_to_one only"),
    ({"mode": "all_pairs", "host_ids": [1]}, "at least 2"),
    ({"mode": "all_pairs", "host_ids": [1, 1]}, "distinct"),
    ({"mode": "all_pairs", "host_ids": [1, 2], "params": {"op": "tcp_rr"}}, "ops"),
    ({"mode": "all_pairs", "host_ids": [1, 2], "params": {"duration_s": -1}}, "duration_s"),
    ({"mode": "all_pairs", "host_ids": [1, 2], "params": {"nope": 1}}, "nope"),
    ({"mode": "all_pairs", "host_ids": [1, 2], "ops": ["udp_stream"]}, "ops"),
    ({"mode": "ring", "host_ids": [1, 2]}, "mode"),
])
def test_bad_mesh_requests_get_a_422_that_says_why(client, body, where):
    r = client.post("/api/meshes", json=body)
    assert r.status_code == 422, r.text
    assert where in r.text


def test_unknown_hosts_and_permissions(client, session):
    r = client.post("/api/meshes", json={"mode": "all_pairs", "host_ids": [999998, 999999]})
    assert r.status_code == 422 and "not a registered host" in r.text
    assert client.get("/api/meshes/999999").status_code == 404
    viewer = make_user(session, "mesh-viewer", "viewer")
    r = client.post("/api/meshes", json={"mode": "all_pairs", "host_ids": [1, 2]}, headers=viewer)
    assert r.status_code == 403  # starting one is creating jobs: operators and admins
    assert client.get("/api/meshes", headers=viewer).status_code == 200


def test_a_mesh_over_the_active_run_cap_is_refused_whole(client, session, monkeypatch):
    from app.core.config import get_settings

    hosts = _hosts(client, session, 4)
    monkeypatch.setattr(get_settings(), "max_active_runs_per_user", 20)  # 6 links x 2 ops x 2 runs = 24
    r = client.post("/api/meshes", json={"mode": "all_pairs", "host_ids": [h for h, _ in hosts], "params": STREAM})
    assert r.status_code == 429 and "limit 20 per person" in r.text and r.headers.get("retry-after")
    assert session.scalars(select(Run.id)).first() is None  # none of its jobs was created
    assert client.get("/api/meshes").json()["data"] == []


def test_the_list_is_light_and_the_mesh_has_the_figures(client, session):
    hosts = _hosts(client, session, 2)
    r = client.post("/api/meshes", json={"mode": "all_pairs", "host_ids": [h for h, _ in hosts], "ops": ["tcp_stream"],
                                         "params": STREAM})
    assert r.status_code == 201, r.text
    _drive_all(client, session, hosts, lambda s, c: 500.0)
    listed = client.get("/api/meshes").json()["data"][0]
    assert [c["status"] for c in listed["cells"]] == ["succeeded"] and listed["cells"][0]["mbps"] is None
    one = client.get(f"/api/meshes/{listed['id']}").json()
    assert one["cells"][0]["mbps"] == 500.0 and one["slowest_link"]["mbps"] == 500.0
    assert one["slowest_host"] is None  # two hosts on the same one link: neither is the slower


def test_a_links_figure_is_judged_against_its_declared_band(client, session):
    """The bands judge a mesh's cells (app.bands.links): a declared band for the clients' tcp_stream figure on a label
    kind they share makes the slow link FAIL with its distance and the others PASS."""
    from app.hosts.models import Host

    hosts = _hosts(client, session, 4)
    ids = [h for h, _ in hosts]
    for h in ids:
        session.get(Host, h).labels = {"rack": "b12"}
    session.commit()
    band = {"kind": "rack=b12", "experiment": "network_drive", "op": "tcp_stream", "threads": 1,
            "block_bytes": STREAM["sizes"][0], "lower": 5000, "unit": "Mbit/s", "note": "the rack's links"}
    assert client.put("/api/bands", json=band).status_code == 200
    r = client.post("/api/meshes", json={"mode": "all_pairs", "host_ids": ids, "ops": ["tcp_stream"],
                                         "params": STREAM})
    assert r.status_code == 201, r.text
    _drive_all(client, session, hosts, lambda s, c: 100.0 if {s, c} == {ids[0], ids[2]} else 9000.0)
    m = client.get(f"/api/meshes/{r.json()['id']}").json()
    verdicts = {(c["server_host_id"], c["client_host_id"]): c["verdict"] for c in m["cells"]}
    slow = next(k for k in verdicts if set(k) == {ids[0], ids[2]})
    assert verdicts.pop(slow) == "FAIL"
    assert set(verdicts.values()) == {"PASS"}, m["cells"]


def test_a_link_its_clients_cpu_quota_throttled_is_not_judged_as_the_link():
    """A drive whose client's own CPU quota throttled it (cpu_bound) measured the quota: the cell is NO BASELINE and
    says why, neither DISTURBED (rerunning changes nothing) nor judged against the link's band."""
    from app.mesh.verdict import Figure, judge

    fig = Figure(run=Run(id=1, host_id=1), server_host_id=2, op="tcp_stream", value=95.0, unit="Mbit/s")
    assert judge(None, [(fig, "cpu_bound")]) == (  # type: ignore[arg-type]
        "NO BASELINE", "tcp_stream: CPU-bound (the client's CPU quota throttled it): not judged as the link's figure")
    assert judge(None, [(fig, "cpu_bound"), (fig, "disturbed")])[0] == "DISTURBED"  # type: ignore[arg-type]
