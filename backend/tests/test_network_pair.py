"""Two-host network jobs: one serve run, one drive run; the drive waits for the server's port."""
import pytest
from sqlalchemy import update

from app.hosts.models import Host
from app.hosts.service import create_registration_token
from app.jobs import dispatch
from app.jobs.models import Run
from tests.conftest import ZEN4_INVENTORY

PARAMS = {"op": "tcp_stream", "sizes": [1024], "streams": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}


def _register(client, session, name):
    token, _ = create_registration_token(session)
    r = client.post("/api/runners/register", json={
        "registration_token": token, "name": name, "hostname": f"{name}.local", "version": "0",
        "inventory": ZEN4_INVENTORY, "labels": {},
    })
    assert r.status_code == 201, r.text
    body = r.json()
    return body["host_id"], {"Authorization": f"Bearer {body['runner_token']}"}


def _pair(client, session, params=PARAMS):
    server = _register(client, session, "server")
    driver = _register(client, session, "driver")
    r = client.post("/api/jobs", json={"host_ids": [server[0], driver[0]], "experiment": "network_pair",
                                       "params": params})
    assert r.status_code == 201, r.text
    serve_run, drive_run = r.json()["runs"]
    return server, driver, serve_run, drive_run


def _claim(client, session, host_id, headers):
    dispatch.dispatch_host(session, host_id)
    r = client.get("/api/runner/work?wait_s=0", headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def _set_address(session, host_id, address):
    session.execute(update(Host).where(Host.id == host_id).values(address=address))
    session.commit()


def test_pair_needs_exactly_two_distinct_hosts(client, session, runner):
    a, _ = runner
    b, _ = _register(client, session, "other")
    c, _ = _register(client, session, "third")
    for host_ids in ([a], [a, b, c], [a, a]):
        r = client.post("/api/jobs", json={"host_ids": host_ids, "experiment": "network_pair", "params": PARAMS})
        assert r.status_code == 422, (host_ids, r.text)
    r = client.post("/api/jobs", json={"host_ids": [a, b], "experiment": "network_pair",
                                       "params": {**PARAMS, "peer": "10.0.0.1"}})
    assert r.status_code == 422  # the peer is never the user's to choose


def test_job_has_a_serve_run_and_a_drive_run(client, session):
    (server_id, _), (driver_id, _), serve, drive = _pair(client, session)
    assert (serve["host_id"], serve["experiment"]) == (server_id, "network_serve")
    assert serve["params"] == {"op": "tcp_stream"}
    assert (drive["host_id"], drive["experiment"]) == (driver_id, "network_drive")
    assert drive["params"]["server_run_id"] == serve["id"]
    assert drive["params"]["sizes"] == [1024] and "peer" not in drive["params"]
    assert drive["unit"] == "Mbit/s"


def test_drive_waits_for_the_port_then_gets_peer_and_port(client, session):
    (server_id, s_headers), (driver_id, d_headers), serve, drive = _pair(client, session)
    assert dispatch.dispatch_host(session, driver_id) is None  # the server has not reported a port
    a = _claim(client, session, server_id, s_headers)
    assert a["run_id"] == serve["id"] and a["experiment"] == "network_serve"
    assert a["deadline_s"] >= drive["expected_duration_s"] + 600
    assert dispatch.dispatch_host(session, driver_id) is None  # claimed, but still no port
    _set_address(session, server_id, "10.1.2.3")
    r = client.post(f"/api/runner/runs/{serve['id']}/listening", json={"attempt": a["attempt"], "port": 40001},
                    headers=s_headers)
    assert r.status_code == 200, r.text
    assert dispatch.dispatch_host(session, driver_id) == drive["id"]
    d = client.get("/api/runner/work?wait_s=0", headers=d_headers).json()
    assert d["run_id"] == drive["id"]
    assert (d["params"]["peer"], d["params"]["port"]) == ("10.1.2.3", 40001)


def test_listening_stale_attempt_and_wrong_run(client, session):
    (server_id, s_headers), (driver_id, d_headers), serve, drive = _pair(client, session)
    a = _claim(client, session, server_id, s_headers)
    r = client.post(f"/api/runner/runs/{serve['id']}/listening", json={"attempt": a["attempt"] + 1, "port": 40001},
                    headers=s_headers)
    assert r.status_code == 409 and "stale" in r.json()["detail"]
    r = client.post(f"/api/runner/runs/{serve['id']}/listening", json={"attempt": a["attempt"], "port": 0},
                    headers=s_headers)
    assert r.status_code == 422
    r = client.post(f"/api/runner/runs/{serve['id']}/listening", json={"attempt": a["attempt"], "port": 40001},
                    headers=d_headers)
    assert r.status_code == 404  # not that runner's run
    assert session.get(Run, serve["id"]).listen_port is None


def _started_pair(client, session):
    (server_id, s_headers), (driver_id, d_headers), serve, drive = _pair(client, session)
    a = _claim(client, session, server_id, s_headers)
    _set_address(session, server_id, "127.0.0.1")
    client.post(f"/api/runner/runs/{serve['id']}/start", json={"attempt": a["attempt"], "kernel_info": {}},
                headers=s_headers)
    client.post(f"/api/runner/runs/{serve['id']}/listening", json={"attempt": a["attempt"], "port": 40001},
                headers=s_headers)
    d = _claim(client, session, driver_id, d_headers)
    return (s_headers, a), (d_headers, d), serve, drive


def test_drive_finish_ends_the_serve_run(client, session):
    (s_headers, a), (d_headers, d), serve, drive = _started_pair(client, session)
    result = {"threads": 1, "repeat": 1, "value": 9000.0, "unit": "Mbit/s", "verified": True, "op": "tcp_stream",
              "block_bytes": 1024}
    r = client.post(f"/api/runner/runs/{drive['id']}/finish", json={"attempt": d["attempt"], "status": "succeeded",
                                                                     "results": [result]}, headers=d_headers)
    assert r.status_code == 200, r.text
    s = client.get(f"/api/runs/{serve['id']}").json()
    assert (s["status"], s["status_reason"]) == ("succeeded", f"served run {drive['id']}")
    lease = client.post(f"/api/runner/runs/{serve['id']}/lease", json={"attempt": a["attempt"]}, headers=s_headers)
    assert lease.status_code == 409  # the serving runner stops its server
    dr = client.get(f"/api/runs/{drive['id']}").json()
    assert dr["status"] == "succeeded" and dr["result"]["rows"][0]["mean"] == 9000.0


def test_drive_failure_fails_the_serve_run(client, session):
    (s_headers, a), (d_headers, d), serve, drive = _started_pair(client, session)
    client.post(f"/api/runner/runs/{drive['id']}/finish", json={"attempt": d["attempt"], "status": "failed",
                                                                 "reason": "connection refused"}, headers=d_headers)
    s = client.get(f"/api/runs/{serve['id']}").json()
    assert s["status"] == "failed" and "connection refused" in s["status_reason"]


def test_serve_failure_fails_the_drive_run(client, session):
    (server_id, s_headers), (driver_id, _), serve, drive = _pair(client, session)
    a = _claim(client, session, server_id, s_headers)
    client.post(f"/api/runner/runs/{serve['id']}/finish", json={"attempt": a["attempt"], "status": "failed",
                                                                 "reason": "kernel error bad_param"}, headers=s_headers)
    d = client.get(f"/api/runs/{drive['id']}").json()
    assert d["status"] == "failed" and "kernel error bad_param" in d["status_reason"]
    assert f"serving run {serve['id']}" in d["status_reason"]
    assert dispatch.dispatch_host(session, driver_id) is None


# --- reference tools: the serve run's reference servers, their ports handed to the driver ----------------------


def test_reference_ports_are_stored_and_handed_to_the_driver_at_claim(client, session):
    (server_id, s_headers), (driver_id, d_headers), serve, drive = _pair(client, session, {**PARAMS, "reference": True})
    assert serve["params"] == {"op": "tcp_stream", "reference": True}  # the serving runner starts the servers
    r = client.post("/api/jobs", json={"host_ids": [server_id, driver_id], "experiment": "network_pair",
                                       "params": PARAMS})
    plain_serve, plain_drive = r.json()["runs"]
    assert drive["expected_duration_s"] > plain_drive["expected_duration_s"]  # time for the tools
    assert serve["expected_duration_s"] > plain_serve["expected_duration_s"]  # the servers outlive them
    a = _claim(client, session, server_id, s_headers)
    _set_address(session, server_id, "10.1.2.3")
    r = client.post(f"/api/runner/runs/{serve['id']}/listening", headers=s_headers,
                    json={"attempt": a["attempt"], "port": 40001, "reference_ports": {"iperf3": 40002}})
    assert r.status_code == 200, r.text
    session.expire_all()
    assert session.get(Run, serve["id"]).reference_ports == {"iperf3": 40002}
    assert dispatch.dispatch_host(session, driver_id) == drive["id"]
    d = client.get("/api/runner/work?wait_s=0", headers=d_headers).json()
    assert d["params"]["reference"] is True
    assert (d["params"]["peer"], d["params"]["port"], d["params"]["reference_ports"]) == ("10.1.2.3", 40001,
                                                                                        {"iperf3": 40002})


def test_a_driver_gets_no_reference_ports_without_the_flag(client, session):
    (server_id, s_headers), (driver_id, d_headers), serve, drive = _pair(client, session)
    a = _claim(client, session, server_id, s_headers)
    _set_address(session, server_id, "10.1.2.3")
    client.post(f"/api/runner/runs/{serve['id']}/listening", headers=s_headers,
                json={"attempt": a["attempt"], "port": 40001, "reference_ports": {"iperf3": 40002}})
    d = _claim(client, session, driver_id, d_headers)
    assert "reference_ports" not in d["params"]


def test_a_server_that_offers_no_reference_server_hands_an_empty_map(client, session):
    (server_id, s_headers), (driver_id, d_headers), serve, drive = _pair(client, session, {**PARAMS, "reference": True})
    a = _claim(client, session, server_id, s_headers)
    _set_address(session, server_id, "10.1.2.3")
    r = client.post(f"/api/runner/runs/{serve['id']}/listening", headers=s_headers,
                    json={"attempt": a["attempt"], "port": 40001})
    assert r.status_code == 200, r.text
    d = _claim(client, session, driver_id, d_headers)
    assert d["params"]["reference_ports"] == {}


@pytest.mark.parametrize("ports", [{"netperf": 5201}, {"iperf3": 0}, {"iperf3": 65536}, {"iperf3": "5201"},
                                   {"sockperf": 1.5}, {"iperf3": True}, [5201], "iperf3=5201"])
def test_bad_reference_ports_are_refused(client, session, ports):
    (server_id, s_headers), _, serve, _ = _pair(client, session, {**PARAMS, "reference": True})
    a = _claim(client, session, server_id, s_headers)
    r = client.post(f"/api/runner/runs/{serve['id']}/listening", headers=s_headers,
                    json={"attempt": a["attempt"], "port": 40001, "reference_ports": ports})
    assert r.status_code == 422, r.text
    session.expire_all()
    run = session.get(Run, serve["id"])
    assert run.listen_port is None and run.reference_ports is None


def test_a_new_serve_attempt_forgets_the_old_reference_ports(client, session):
    (server_id, s_headers), _, serve, _ = _pair(client, session, {**PARAMS, "reference": True})
    a = _claim(client, session, server_id, s_headers)
    client.post(f"/api/runner/runs/{serve['id']}/listening", headers=s_headers,
                json={"attempt": a["attempt"], "port": 40001, "reference_ports": {"iperf3": 40002}})
    again = client.get("/api/runner/work?wait_s=0", headers=s_headers).json()  # the same run, lost in transit
    assert again["run_id"] == serve["id"] and again["attempt"] == a["attempt"] + 1
    session.expire_all()
    run = session.get(Run, serve["id"])
    assert run.listen_port is None and run.reference_ports is None
