"""Crossing two-host jobs (docs/reliability.md, rule 8): A serves B while B serves A. Each host runs one benchmark at
a time, and a drive run waits for its server's port; if both serve runs were handed out first, each host would
serve forever, waiting for a driver that can never start on the other, busy host."""
from app.jobs import dispatch
from app.jobs.models import Run
from tests.test_network_pair import PARAMS, _register, _set_address


def _ask(client, session, host_id, headers):
    """The host's runner asks for work (its long poll, after the doorbell): the assignment, or None."""
    dispatch.dispatch_host(session, host_id)
    r = client.get("/api/runner/work?wait_s=0", headers=headers)
    return None if r.status_code == 204 else r.json()


def test_crossing_pairs_cannot_deadlock(client, session):
    a, a_headers = _register(client, session, "host-a")
    b, b_headers = _register(client, session, "host-b")
    _set_address(session, a, "10.9.0.1")
    _set_address(session, b, "10.9.0.2")
    for serve_host, drive_host in ((a, b), (b, a)):
        r = client.post("/api/jobs", json={"host_ids": [serve_host, drive_host], "experiment": "network_pair",
                                           "params": PARAMS})
        assert r.status_code == 201, r.text
    # both doorbells ring at once: both runners ask before either server has reported its port
    got = {a: _ask(client, session, a, a_headers), b: _ask(client, session, b, b_headers)}
    for host, headers in ((a, a_headers), (b, b_headers)):
        g = got[host]
        if g is not None and g["experiment"] == "network_serve":
            r = client.post(f"/api/runner/runs/{g['run_id']}/listening", json={"attempt": g["attempt"],
                                                                               "port": 41000 + host},
                            headers=headers)
            assert r.status_code == 200, r.text
    # some pair must be able to finish: a host is driving already, or is handed its drive run now
    driving = [g for g in got.values() if g is not None and g["experiment"] == "network_drive"]
    for host, headers in ((a, a_headers), (b, b_headers)):
        if got[host] is None:
            g = _ask(client, session, host, headers)
            if g is not None and g["experiment"] == "network_drive":
                driving.append(g)
    runs = [(r.id, r.host_id, r.experiment, r.status) for r in session.query(Run).order_by(Run.id)]
    assert driving, f"deadlock: each host serves and waits for a driver the other, busy host cannot start: {runs}"


def test_a_serve_run_waits_until_its_driver_can_start(client, session, monkeypatch):
    """The full suite on one host with a peer found it: the peer's serve run was handed out at once while the
    driving host was busy with the suite's runs of one host, served an idle port past its deadline and failed the
    pair. Now the serve run waits while the driving host is busy or has a run of one host queued ahead of the
    drive run; the driving host is held for the pair once the peer is free; and when the driving host ends a run,
    the peer's doorbell is rung."""
    from app.jobs import doorbell, service

    rung: list[int] = []
    monkeypatch.setattr(service, "ring", rung.append)
    monkeypatch.setattr(doorbell, "ring", rung.append)
    peer, peer_headers = _register(client, session, "peer")
    host, host_headers = _register(client, session, "host")
    _set_address(session, peer, "10.9.0.1")
    _set_address(session, host, "10.9.0.2")
    cpu = {"op": "fp64", "threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}
    first = client.post("/api/jobs", json={"host_ids": [host], "experiment": "cpu", "params": cpu})
    pair = client.post("/api/jobs", json={"host_ids": [peer, host], "experiment": "network_pair", "params": PARAMS})
    later = client.post("/api/jobs", json={"host_ids": [host], "experiment": "cpu", "params": cpu})
    assert first.status_code == pair.status_code == later.status_code == 201
    first_run, later_run = first.json()["runs"][0]["id"], later.json()["runs"][0]["id"]
    # the peer is idle, but the driving host has a run of one host ahead of the drive run: the serve run waits
    assert _ask(client, session, peer, peer_headers) is None
    g = _ask(client, session, host, host_headers)
    assert g is not None and g["run_id"] == first_run
    # busy: the serve run still waits
    assert _ask(client, session, peer, peer_headers) is None
    client.post(f"/api/runner/runs/{first_run}/start", json={"attempt": g["attempt"]}, headers=host_headers)
    rung.clear()
    r = client.post(f"/api/runner/runs/{first_run}/finish", json={"attempt": g["attempt"], "status": "failed",
                                                                   "reason": "test"}, headers=host_headers)
    assert r.status_code == 200, r.text
    assert peer in rung, rung  # the driving host is free: the peer is asked again
    # the driving host is held for the pair (the later run of one host does not jump in), the peer serves now
    assert _ask(client, session, host, host_headers) is None
    s = _ask(client, session, peer, peer_headers)
    assert s is not None and s["experiment"] == "network_serve"
    r = client.post(f"/api/runner/runs/{s['run_id']}/listening", json={"attempt": s["attempt"], "port": 41001},
                    headers=peer_headers)
    assert r.status_code == 200, r.text
    d = _ask(client, session, host, host_headers)
    assert d is not None and d["experiment"] == "network_drive" and d["run_id"] != later_run
