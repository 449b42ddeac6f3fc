"""Enrolment tokens for many hosts (app.hosts.enrol): a use count that concurrent joins never exceed, labels,
expiry, revocation, the audit of every join, a machine joining again keeping its host; and the install forms
for a fleet (app.install.fleet): the Kubernetes manifest checked against the Kubernetes API's own schema
(kubernetes-validate), the cloud-init file, the idempotent shell command."""
import os
import shlex
import subprocess
import threading
import time
from datetime import timedelta

import httpx
import pytest
import yaml

from tests.apiproc import api_process
from tests.conftest import ZEN4_INVENTORY, make_user

TOKENS = "/api/hosts/registration-tokens"


def _join(client, token: str, name: str, machine_id: str | None = None, labels: dict | None = None):
    body = {"registration_token": token, "name": name, "hostname": f"{name}.local", "version": "0",
            "inventory": ZEN4_INVENTORY, "labels": labels or {}}
    if machine_id:
        body["machine_id"] = machine_id
    return client.post("/api/runners/register", json=body)


def test_one_hundred_joins_race_on_a_token_of_sixty(tmp_path, session):
    """A real API process, 100 threads each joining at the same instant: exactly 60 hosts, 40 clear refusals."""
    admin = make_user(session, "fleet-admin", "admin")
    with api_process(tmp_path / "api.log", dict(os.environ, PYTHONUNBUFFERED="1")) as base:
        r = httpx.post(base + TOKENS, headers=admin, json={"uses": 60, "name": "rack 12", "ttl_s": 3600,
                                                            "labels": {"rack": "12"}}, timeout=30)
        assert r.status_code == 201, r.text
        token = r.json()["token"]
        go = threading.Barrier(100)
        answers: list[tuple[int, dict]] = [(0, {})] * 100

        def join(i: int) -> None:
            with httpx.Client(base_url=base, timeout=120) as c:
                go.wait()
                while True:
                    resp = _join(c, token, f"node-{i:03d}")
                    if resp.status_code in (429, 503):  # shed by admission: a runner retries after Retry-After
                        time.sleep(float(resp.headers.get("retry-after", "0.2")))
                        continue
                    answers[i] = (resp.status_code, resp.json())
                    return

        threads = [threading.Thread(target=join, args=(i,)) for i in range(100)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(180)
        took = time.monotonic() - t0
        codes = sorted(code for code, _ in answers)
        assert codes.count(201) == 60 and codes.count(401) == 40, codes
        refusals = {body["detail"] if isinstance(body.get("detail"), str) else str(body) for code, body in answers
                    if code == 401}
        assert all("rack 12" in m and "no uses left" in m for m in refusals), refusals
        listed = httpx.get(base + TOKENS, headers=admin, timeout=30).json()["data"][0]
        assert (listed["uses"], listed["uses_left"], listed["max_uses"], listed["usable"]) == (60, 0, 60, False)
        hosts = httpx.get(base + "/api/hosts", headers=admin, timeout=30).json()
        assert hosts["count"] == 60 and len({h["id"] for h in hosts["data"]}) == 60
        assert all(h["labels"]["rack"] == "12" for h in hosts["data"])
        audit = httpx.get(base + "/api/audit", headers=admin, params={"limit": 500}, timeout=30).json()["data"]
        enrols = [e for e in audit if e["action"] == "host.enrol"]
        assert len(enrols) == 60 and all(e["detail"]["address"] == "127.0.0.1" and e["detail"]["token_name"]
                                         == "rack 12" for e in enrols)
        print(f"\n100 joins on a token of 60: 60 hosts, 40 refused (401) in {took:.2f} s")


def test_token_count_unlimited_expiry_revocation_and_rejoin(client, session):
    from app.hosts.models import RegistrationToken

    # "Add host" stays single use
    single = client.post(TOKENS, json={}).json()
    assert single["info"]["max_uses"] == 1 and single["info"]["uses_left"] == 1
    assert _join(client, single["token"], "a").status_code == 201
    again = _join(client, single["token"], "b")
    assert again.status_code == 401 and "no uses left" in again.json()["detail"]

    # unlimited, with labels over the runner's own; revoked: no more joins, joined hosts stay
    fleet = client.post(TOKENS, json={"uses": None, "name": "cloud", "labels": {"provider": "aws", "pool": "x"}})
    assert fleet.status_code == 201 and fleet.json()["info"]["uses_left"] is None
    for i in range(5):
        r = _join(client, fleet.json()["token"], f"c{i}", labels={"provider": "mine", "own": "1"})
        assert r.status_code == 201, r.text
    host = client.get(f"/api/hosts/{r.json()['host_id']}").json()
    assert host["labels"] == {"provider": "aws", "pool": "x", "own": "1"}
    tid = fleet.json()["info"]["id"]
    assert client.delete(f"{TOKENS}/{tid}").json()["revoked_at"] is not None
    refused = _join(client, fleet.json()["token"], "c9")
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    assert client.get("/api/hosts").json()["count"] == 6

    # expired
    exp = client.post(TOKENS, json={"uses": 3}).json()
    row = session.get(RegistrationToken, exp["info"]["id"])
    row.expires_at -= timedelta(hours=1)
    session.commit()
    r = _join(client, exp["token"], "late")
    assert r.status_code == 401 and "expired" in r.json()["detail"]
    assert client.delete(f"{TOKENS}/999999").status_code == 404

    # the same machine joins again under its name: the same host, a new credential, the old one refused
    t = client.post(TOKENS, json={"uses": 3}).json()["token"]
    first = _join(client, t, "m1", machine_id="0123abcd")
    second = _join(client, t, "m1", machine_id="0123abcd")
    assert first.status_code == second.status_code == 201
    assert first.json()["host_id"] == second.json()["host_id"]
    old = {"Authorization": f"Bearer {first.json()['runner_token']}"}
    new = {"Authorization": f"Bearer {second.json()['runner_token']}"}
    assert client.post("/api/runner/heartbeat", json={}, headers=old).status_code == 401
    assert client.post("/api/runner/heartbeat", json={}, headers=new).status_code == 200
    # another runner on the same machine under another name is another host
    assert _join(client, t, "m2", machine_id="0123abcd").json()["host_id"] != first.json()["host_id"]
    actions = [e["action"] for e in client.get("/api/audit", params={"limit": 100}).json()["data"]]
    assert "host.rejoin" in actions and "host.registration_token.revoke" in actions


def test_token_routes_are_admin_only_and_bad_input_is_4xx(client, session, anon_client):
    operator = make_user(session, "op", "operator")
    for method, path in (("post", TOKENS), ("get", TOKENS), ("delete", f"{TOKENS}/1")):
        assert getattr(anon_client, method)(path, **({"json": {}} if method == "post" else {})).status_code == 401
        r = getattr(anon_client, method)(path, headers=operator, **({"json": {}} if method == "post" else {}))
        assert r.status_code == 403
    for bad in ({"uses": 0}, {"uses": "many"}, {"ttl_s": 10}, {"labels": {"": "x"}}, {"labels": {"k": 1}},
                {"namespace": "Not_A_Name"}, {"labels": {f"k{i}": "v" for i in range(33)}}):
        assert client.post(TOKENS, json=bad).status_code == 422, bad


# --- the install forms ---------------------------------------------------------------------------------------

def test_kubernetes_manifest_is_valid_against_the_kubernetes_api_schema(client):
    import kubernetes_validate

    body = client.post(TOKENS, json={"uses": None, "namespace": "bench", "image": "registry.local/hb:1"}).json()
    docs = list(yaml.safe_load_all(body["kubernetes_manifest"]))
    assert [d["kind"] for d in docs] == ["Namespace", "Secret", "ServiceAccount", "DaemonSet"]
    for doc in docs:
        # strict: an unknown or misspelt field fails as a wrong type does
        kubernetes_validate.validate(doc, "1.30", strict=True)
    secret, ds = docs[1], docs[3]
    assert secret["stringData"]["token"] == body["token"] and secret["stringData"]["server"] == "http://testserver"
    pod = ds["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["nodeSelector"] and ds["metadata"]["namespace"] == "bench"
    c = pod["containers"][0]
    assert c["image"] == "registry.local/hb:1" and c["resources"]["requests"]
    assert c["securityContext"]["privileged"] is False and c["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert {e["name"]: e["valueFrom"]["secretKeyRef"]["key"] for e in c["env"] if "secretKeyRef" in e["valueFrom"]} \
        == {"HOSTBENCH_SERVER": "server", "HOSTBENCH_REGISTRATION_TOKEN": "token"}
    # the validator does catch a wrong manifest
    broken = dict(ds, spec={**ds["spec"], "template": {**ds["spec"]["template"],
                                                       "spec": {**pod, "hostNetwrok": True}}})
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.30", strict=True)


def test_cloud_init_and_shell_command_run_the_one_installer(client, tmp_path):
    from app.install.service import install_command

    body = client.post(TOKENS, json={"uses": 10}).json()
    ci = body["cloud_init"]
    assert ci.startswith("#cloud-config\n")
    (cmd,) = yaml.safe_load(ci)["runcmd"]
    assert cmd == ["sh", "-c", body["shell_command"]]
    assert install_command("http://testserver", body["token"]) in body["shell_command"]
    assert body["install_command"] == install_command("http://testserver", body["token"])


def test_shell_command_a_second_run_changes_nothing(tmp_path):
    """With the credential the installer keeps in place, the command downloads nothing and changes nothing (the
    server here does not exist: any download would fail the command)."""
    from app.install import fleet

    root = tmp_path / "root"
    cred = root / fleet.CREDENTIAL.lstrip("/")
    cred.parent.mkdir(parents=True)
    cred.write_text('{"host_id": 1, "runner_token": "hbrun_x"}')
    cmd = fleet.shell_command("http://127.0.0.1:9", "hbreg_t").replace(fleet.CREDENTIAL, str(cred))
    before = sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*"))
    r = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == r.stderr == ""
    assert sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*")) == before
    # without the credential it does run the installer (and fails here: no server at that address)
    cred.unlink()
    r = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert shlex.split(fleet.shell_command("http://a:1", "t"))[:3] == ["test", "-s", fleet.CREDENTIAL]


def test_cli_token_makes_a_fleet_token_and_prints_its_forms(capsys, session):
    from app import cli
    from app.hosts.models import RegistrationToken

    assert cli.main(["token", "--uses", "50", "--name", "rack 7", "--label", "rack=7", "--ttl-s", "86400",
                     "--form", "kubernetes", "--namespace", "hb"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert docs[3]["kind"] == "DaemonSet" and docs[3]["metadata"]["namespace"] == "hb"
    row = session.query(RegistrationToken).one()
    assert (row.max_uses, row.uses_left, row.name, row.labels) == (50, 50, "rack 7", {"rack": "7"})
    assert cli.main(["token", "--uses", "unlimited", "--form", "all"]) == 0
    out = capsys.readouterr().out
    assert "uses left: unlimited" in out and "#cloud-config" in out and 'kind: "DaemonSet"' in out
    assert cli.main(["token"]) == 0 and capsys.readouterr().out.startswith("hbreg_")
    assert cli.main(["token", "--uses", "0"]) == 1 and "uses" in capsys.readouterr().err
    assert cli.main(["token", "--label", "novalue"]) == 1
    # --expires (./hostbench token's, declared once here): a duration in words; a wrong one is refused by argparse
    assert cli.main(["token", "--expires", "2h", "--name", "two hours"]) == 0
    row = session.query(RegistrationToken).filter_by(name="two hours").one()
    left = (row.expires_at - row.created_at).total_seconds()
    assert 7200 - 60 <= left <= 7200 + 60, left
    with pytest.raises(SystemExit) as refused:
        cli.main(["token", "--expires", "2 weeks"])
    assert refused.value.code == 2 and "--expires" in capsys.readouterr().err
