"""Issue 30 items 3 and 4 where no Slurm or Kubernetes cluster is needed: the runner's one-shot mode (a real runner
process against a real API process: joins under its Slurm node name, leaves with exit 4 when no work comes, keeps
nothing on the host), the drain route's refusals and audit (the drain itself runs against a real Slurm cluster in
`./hostbench slurm lab`, the fleet suite), and the one-shot Kubernetes Job manifest checked against the Kubernetes
API's schema (kubernetes-validate, strict)."""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.apiproc import api_process
from tests.conftest import make_user

TOKENS = "/api/hosts/registration-tokens"
RUNNER = Path(__file__).resolve().parents[2] / "runner"


def _host(session, name):
    from sqlalchemy import select

    from app.hosts.models import Host

    session.expire_all()
    return session.scalars(select(Host).where(Host.name == name)).one()


def test_one_shot_runner_joins_as_its_slurm_node_and_leaves_when_no_work_comes(tmp_path, session):
    admin = make_user(session, "once-admin", "admin")
    with api_process(tmp_path / "api.log", dict(os.environ, PYTHONUNBUFFERED="1")) as base:
        token = httpx.post(base + TOKENS, headers=admin, json={"uses": 2, "name": "slurm job 7"},
                           timeout=30).json()["token"]
        before = set(os.listdir(tempfile.gettempdir()))
        env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTBENCH_RUNNER")}
        env.update(HOSTBENCH_SERVER=base, HOSTBENCH_REGISTRATION_TOKEN=token, SLURMD_NODENAME="node017",
                   HOSTBENCH_FMA_PROBE="0", HOSTBENCH_MACHINE_ID="f" * 32, PYTHONUNBUFFERED="1")
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "hostbench_runner", "--once", "--once-wait", "3"], env=env,
                           cwd=RUNNER, capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t0
        assert r.returncode == 4, r.stderr[-2000:]
        assert "no work came within 3 s" in r.stderr and took < 60, (took, r.stderr[-1000:])
        host = _host(session, "node017")
        assert host.labels["slurm_node"] == "node017"
        left = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("hostbench-runner-once-")}
        assert not left, left  # its temporary state went with it
        # the next job on the node joins again as the same host
        r = subprocess.run([sys.executable, "-m", "hostbench_runner", "--once", "--once-wait", "1"], env=env,
                           cwd=RUNNER, capture_output=True, text=True, timeout=120)
        assert r.returncode == 4, r.stderr[-2000:]
        assert _host(session, "node017").id == host.id


def test_slurm_drain_is_opt_in_needs_a_node_and_is_audited(client, session, monkeypatch):
    from app.core.config import get_settings
    from app.hosts.models import Host

    host = Host(name="plain-host", hostname="p", token_hash=os.urandom(16).hex(), runner_version="0", labels={}, inventory={})
    node = Host(name="cn01", hostname="cn01", token_hash=os.urandom(16).hex(), runner_version="0", labels={"slurm_node": "cn01"}, inventory={})
    session.add_all([host, node])
    session.commit()
    # off by default: 409, nothing run, nothing audited
    r = client.post(f"/api/hosts/{node.id}/slurm-drain", json={"reason": "check failed"})
    assert r.status_code == 409 and "HOSTBENCH_SLURM_DRAIN" in r.json()["detail"]
    monkeypatch.setattr(get_settings(), "hostbench_slurm_drain", True)
    r = client.post(f"/api/hosts/{host.id}/slurm-drain", json={"reason": "check failed"})
    assert r.status_code == 422 and "no Slurm node name" in r.json()["detail"]
    for bad in ({"reason": ""}, {"reason": "two\nlines"}, {"reason": "x" * 201}, {}):
        assert client.post(f"/api/hosts/{node.id}/slurm-drain", json=bad).status_code == 422, bad
    assert client.post("/api/hosts/999999/slurm-drain", json={"reason": "r"}).status_code == 404
    # no Slurm controller answers here: scontrol fails (or is missing), the attempt is audited and answered 503
    monkeypatch.setenv("SLURM_CONF", "/nonexistent/slurm.conf")
    r = client.post(f"/api/hosts/{node.id}/slurm-drain", json={"reason": "hostbench quick: 0 of 4 runs"})
    assert r.status_code == 503 and "cn01" in r.json()["detail"], r.text
    audit = client.get("/api/audit", params={"limit": 50}).json()["data"]
    (event,) = [e for e in audit if e["action"] == "host.slurm_drain"]
    assert event["detail"]["node"] == "cn01" and event["detail"]["ok"] is False
    assert event["detail"]["reason"] == "hostbench quick: 0 of 4 runs" and event["detail"]["error"]


def test_slurm_drain_is_for_admins(anon_client, session):
    from app.hosts.models import Host

    node = Host(name="cn02", hostname="cn02", token_hash=os.urandom(16).hex(), runner_version="0", labels={"slurm_node": "cn02"}, inventory={})
    session.add(node)
    session.commit()
    operator = make_user(session, "drain-operator", "operator")
    assert anon_client.post(f"/api/hosts/{node.id}/slurm-drain", json={"reason": "r"},
                            headers=operator).status_code == 403
    assert anon_client.post(f"/api/hosts/{node.id}/slurm-drain", json={"reason": "r"}).status_code == 401


def test_kubernetes_one_shot_jobs_are_valid_against_the_kubernetes_api_schema(client):
    import kubernetes_validate

    nodes = ["worker-a", "gpu-node.example.internal", "n" * 70]
    body = client.post(TOKENS, json={"uses": 3, "namespace": "bench", "image": "registry.local/hb:1",
                                     "nodes": nodes}).json()
    docs = list(yaml.safe_load_all(body["kubernetes_jobs"]))
    assert [d["kind"] for d in docs] == ["Namespace", "Secret", "ServiceAccount", "Job", "Job", "Job"]
    for doc in docs:
        kubernetes_validate.validate(doc, "1.30", strict=True)
    jobs = docs[3:]
    assert len({j["metadata"]["name"] for j in jobs}) == 3 and all(len(j["metadata"]["name"]) <= 63 for j in jobs)
    for job, node in zip(jobs, nodes, strict=True):
        pod = job["spec"]["template"]["spec"]
        assert pod["nodeName"] == node and pod["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] == 0
        (c,) = pod["containers"]
        env = {e["name"]: e for e in c["env"]}
        assert env["HOSTBENCH_NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
        assert env["HOSTBENCH_ONCE"]["value"] == "1" and env["HOSTBENCH_RUNNER_STATE"]["value"] == ""
        assert c["securityContext"]["capabilities"]["drop"] == ["ALL"] and c["securityContext"]["privileged"] is False
        assert not any(v.get("hostPath", {}).get("path") == "/var/lib/hostbench-runner" for v in pod["volumes"])
    # the DaemonSet names its runner by the node too (downward API)
    ds = list(yaml.safe_load_all(body["kubernetes_manifest"]))[3]
    env = {e["name"]: e for e in ds["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["HOSTBENCH_NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    # no nodes: no Jobs; a bad node name: 422
    assert client.post(TOKENS, json={"uses": 1}).json()["kubernetes_jobs"] == ""
    assert client.post(TOKENS, json={"uses": 1, "nodes": ["Bad Node"]}).status_code == 422
    broken = dict(jobs[0], spec={**jobs[0]["spec"], "backofLimit": 0})
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.30", strict=True)
