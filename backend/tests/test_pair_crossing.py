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
