"""Hosts of one machine measured in turn (app.jobs.turns): a health check over three runners that share a running
kernel (one boot id, as runners in network namespaces or containers side by side have) and one on a machine of its
own. The lone host and the first of the three start at once; the second of the three only when the first has ended
every run of the check, and so on; the check's page says so. Runners are played through the runner API on the real
server (PostgreSQL, the dispatcher), as in test_mesh.py; the same on real runners in network namespaces:
tests/test_check_faults.py."""
from sqlalchemy import select

from app.jobs import turns
from app.jobs.models import Job, Run, SuiteRun
from tests.conftest import ZEN4_INVENTORY
from tests.test_network_pair import PARAMS, _set_address
from tests.test_pair_crossing import _ask
from tests.test_verdict_corpus import _register as register


def _register(client, session, name: str, boot: str) -> tuple[int, dict]:
    """A runner of a machine whose boot id is `boot` (its own machine id): hosts with one boot id are one machine."""
    return register(client, session, name, {**ZEN4_INVENTORY, "os": {"boot_id": boot, "machine_id": f"m-{name}"}})


def _end(client, g: dict, headers: dict) -> None:
    r = client.post(f"/api/runner/runs/{g['run_id']}/start", json={"attempt": g["attempt"], "kernel_info": {}},
                    headers=headers)
    assert r.status_code == 200, r.text
    r = client.post(f"/api/runner/runs/{g['run_id']}/finish", headers=headers,
                    json={"attempt": g["attempt"], "status": "failed", "reason": "played by the test"})
    assert r.status_code == 200, r.text


def _play(client, session, hosts: dict[str, tuple[int, dict]], names: tuple[str, ...]) -> list[str]:
    """Every runner asks for work and ends what it got (a server listens and ends with its driver), until nothing is
    left; after each step, never two hosts of the shared machine measuring at once (a serve run counts as its
    driver's), the lone host alongside. The order the runs went: a host's name, or "serve for <driver>"."""
    order: list[str] = []
    driver_of: dict[int, str] = {}
    for _ in range(40):
        got = {n: _ask(client, session, *hosts[n]) for n in hosts}
        on = sorted(n for n, g in got.items() if g is not None)
        if not on:
            return order
        for n in on:
            g = got[n]
            if g["experiment"] == "network_serve":
                driver = session.scalar(select(Run.host_id).where(Run.experiment == "network_drive",
                                                                  Run.params["server_run_id"].as_integer()
                                                                  == g["run_id"]))
                driver_of[g["run_id"]] = next(x for x in names if hosts[x][0] == driver)
                order.append(f"serve for {driver_of[g['run_id']]}")
                _listen(client, g, hosts[n][1])
            else:
                order.append(n)
                _end(client, g, hosts[n][1])
        session.expire_all()
        on_host = {r.host_id for r in session.scalars(select(Run).where(Run.status.in_(("dispatched", "running"))))
                   if r.experiment != "network_serve"}
        busy = {n for n in names if hosts[n][0] in on_host} | {
            driver_of[r.id] for r in session.scalars(select(Run).where(Run.experiment == "network_serve",
                                                                       Run.status.in_(("dispatched", "running"))))
            if r.id in driver_of}
        assert len(busy - {"alone"}) <= 1, busy
    raise AssertionError(f"still running after 40 steps: {order}")


def test_hosts_of_one_machine_are_measured_one_after_another_and_the_check_says_so(client, session):
    """Two items of one host and a TCP stream to a peer (the peer on the shared machine too: its serve run goes in
    the turn of the host that drives to it)."""
    names = ("one-a", "one-b", "alone", "one-c")
    hosts = {n: _register(client, session, n, "lone-boot" if n == "alone" else "shared-boot")
             for n in (*names, "peer")}
    for i, n in enumerate((*names, "peer")):
        _set_address(session, hosts[n][0], f"10.9.3.{i + 1}")
    suite = client.post("/api/suites", json={"title": "two items", "description": "", "items": [
        {"experiment": "cpu", "params": {"op": ["fp64"], "threads": [1], "repeats": 1, "duration_s": 1,
                                         "warmup_s": 0}},
        {"experiment": "memory", "params": {"op": ["copy"], "threads": [1], "repeats": 1, "duration_s": 1,
                                            "warmup_s": 0}},
        {"experiment": "network_pair", "params": PARAMS}]}).json()
    # the estimate: the three of one machine one after another take three times one host's time
    est = client.post("/api/suite-runs/estimate", json={"suite": suite["id"], "peer_host_id": hosts["peer"][0],
                                                        "host_ids": [hosts[n][0] for n in names]}).json()
    one = est["per_host"][str(hosts["alone"][0])]
    assert one > 0 and abs(est["typical_s"] - 3 * one) <= 0.2, est  # per_host is rounded to 0.1 s
    r = client.post("/api/checks", json={"suite": suite["id"], "host_ids": [hosts[n][0] for n in names],
                                         "peer_host_id": hosts["peer"][0]})
    assert r.status_code == 201, r.text
    check = r.json()
    said = {h["host_name"]: h["in_turn"] for h in check["hosts"]}
    assert said == {
        "one-a": "measured in turn: same machine as one-b, one-c (the same running kernel (boot id)); 1st of 3",
        "one-b": "measured in turn: same machine as one-a, one-c (the same running kernel (boot id)); 2nd of 3",
        "one-c": "measured in turn: same machine as one-a, one-b (the same running kernel (boot id)); 3rd of 3",
        "alone": None}
    page = client.get(f"/api/checks/{check['id']}/report").text  # the report says it too
    assert "measured in turn: same machine as one-a, one-c (the same running kernel (boot id)); 2nd of 3" in page
    sr = session.get(SuiteRun, check["suite_run_id"])
    assert sr.turns == [{"hosts": [hosts["one-a"][0], hosts["one-b"][0], hosts["one-c"][0]],
                         "why": "the same running kernel (boot id)"}]

    order = _play(client, session, hosts, names)
    mine = [x for x in order if x != "alone" and x != "serve for alone"]
    assert mine == ["one-a", "one-a", "serve for one-a", "one-a", "one-b", "one-b", "serve for one-b", "one-b",
                    "one-c", "one-c", "serve for one-c", "one-c"], order  # host by host, as picked
    session.expire_all()
    left = session.scalars(select(Run.status).join(Job, Job.id == Run.job_id)
                           .where(Job.suite_run_id == check["suite_run_id"])).all()
    assert len(left) == 16 and "queued" not in left and "running" not in left, left


def _listen(client, g: dict, headers: dict) -> None:
    r = client.post(f"/api/runner/runs/{g['run_id']}/start", json={"attempt": g["attempt"], "kernel_info": {}},
                    headers=headers)
    assert r.status_code == 200, r.text
    r = client.post(f"/api/runner/runs/{g['run_id']}/listening", json={"attempt": g["attempt"], "port": 42100},
                    headers=headers)
    assert r.status_code == 200, r.text


def test_the_groups_are_by_machine_not_by_address(session):
    from app.hosts.models import Host

    def host(i: int, boot: str | None, machine: str | None, address: str = "10.0.0.1") -> Host:
        os_ = {k: v for k, v in (("boot_id", boot), ("machine_id", machine)) if v}
        return Host(id=i, name=f"h{i}", inventory={"os": os_}, address=address)

    # one installation twice (machine id), one kernel twice (boot id), one NAT address shared by separate machines
    got = turns.plan([host(1, "b1", "m1"), host(2, "b2", "m2"), host(3, "b3", "m1"), host(4, "b2", "m4"),
                      host(5, None, None), host(6, None, None)])
    assert got == [{"hosts": [1, 3], "why": "the same installation (machine id)"},
                   {"hosts": [2, 4], "why": "the same running kernel (boot id)"}]


def test_a_two_host_item_between_two_hosts_of_one_machine_goes_in_the_drivers_turn(client, session):
    """Without a peer a suite's two-host item runs between the first two hosts picked: here both of one machine. Its
    serve run, on the first, goes in the second's turn, after the first host's own runs (no deadlock: neither the
    serve run nor the second host's runs wait for the other)."""
    names = ("one-a", "one-b", "one-c")
    hosts = {n: _register(client, session, n, "shared-boot") for n in names}
    for i, n in enumerate(names):
        _set_address(session, hosts[n][0], f"10.9.4.{i + 1}")
    suite = client.post("/api/suites", json={"title": "cpu and a pair", "description": "", "items": [
        {"experiment": "cpu", "params": {"op": ["fp64"], "threads": [1], "repeats": 1, "duration_s": 1,
                                         "warmup_s": 0}},
        {"experiment": "network_pair", "params": PARAMS}]}).json()
    r = client.post("/api/suite-runs", json={"suite": suite["id"], "host_ids": [hosts[n][0] for n in names]})
    assert r.status_code == 201, r.text
    order = _play(client, session, hosts, names)
    assert order == ["one-a", "one-b", "serve for one-b", "one-b", "one-c"], order
