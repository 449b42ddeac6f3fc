"""Install forms for many hosts with one enrolment token, all built on the one installer this server serves
(install.sh with its own arguments, app.install.service.install_command) or its container image:

- shell_command: for configuration management (Ansible's shell module, Salt's cmd.run, ...): the install
  command behind a guard on the credential the installer keeps, so a second run does nothing;
- cloud_init: #cloud-config user data that runs shell_command at first boot;
- kubernetes_manifest: a Namespace, a Secret holding the server URL and the token, a ServiceAccount that mounts
  no API token, and a DaemonSet running the runner's image on every selected node: the node's network and PID
  namespace (the runner measures the node and serves two-host network jobs), no privilege and no capability, the
  node's machine id (read only) so a replaced pod joins again as the same host, its credential on the node.

YAML is written here (no YAML library at run time): mappings and lists in block style, every string
double-quoted with JSON's escapes, which YAML reads as the same string."""
from __future__ import annotations

import json
import re
import shlex
from typing import Any

from app.install.service import install_command

# Where the installer puts the runner when told (--dir); its credential is DIR/state/credential.json
# (install.sh: "DIR/state (credential and spool: kept on upgrade)").
FLEET_DIR = "/opt/hostbench-runner"
CREDENTIAL = f"{FLEET_DIR}/state/credential.json"
# In the container image (runner/install/Dockerfile: HOSTBENCH_RUNNER_STATE).
IMAGE_STATE = "/var/lib/hostbench-runner"
NODE_STATE = "/var/lib/hostbench-runner"
APP = "hostbench-runner"
# A mapping key written bare: letters first, no YAML punctuation, none of the words YAML 1.1 reads as booleans.
_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9._/-]*$")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def shell_command(base_url: str, token: str) -> str:
    """Idempotent: once the host holds a credential the guard is true and nothing runs (no download, no
    registration, no service change). The installer registers before it returns, so no credential afterwards is
    a failure, and the command exits non-zero for configuration management to see (a failed download alone would
    not: `sh -s` reading nothing exits 0)."""
    cred = shlex.quote(CREDENTIAL)
    return (f"test -s {cred} || {{ {install_command(base_url, token)} --dir {shlex.quote(FLEET_DIR)}; "
            f"test -s {cred} || {{ echo 'hostbench-runner: not installed (see above)' >&2; false; }}; }}")


def cloud_init(base_url: str, token: str) -> str:
    return "#cloud-config\n" + to_yaml({"runcmd": [["sh", "-c", shell_command(base_url, token)]]})


def _runner_container(image: str, *, once: bool = False) -> dict[str, Any]:
    secret_env = [{"name": env, "valueFrom": {"secretKeyRef": {"name": APP, "key": key}}}
                  for env, key in (("HOSTBENCH_SERVER", "server"), ("HOSTBENCH_REGISTRATION_TOKEN", "token"))]
    # the node's name by the downward API: the runner takes it as its name and its label k8s_node
    node_env = [{"name": "HOSTBENCH_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    # one-shot: no state directory (the runner uses a temporary one and removes it), so nothing stays on the node
    once_env = [{"name": "HOSTBENCH_ONCE", "value": "1"}, {"name": "HOSTBENCH_RUNNER_STATE", "value": ""}]
    mounts = [{"name": "machine-id", "mountPath": "/etc/machine-id", "readOnly": True}]
    return {
        "name": "runner",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "env": secret_env + node_env + (once_env if once else []),
        # Requests only: a CPU or memory limit would throttle the very benchmark it runs.
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "securityContext": {"privileged": False, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": False},
        "volumeMounts": mounts if once else [{"name": "state", "mountPath": IMAGE_STATE}, *mounts],
    }


def _pod_spec(container: dict[str, Any], volumes: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The node's network and PID namespaces (the runner measures the node and serves two-host network jobs),
    the node's machine id read only (a replaced pod joins again as the same host), no API token."""
    return {
        "serviceAccountName": APP,
        "automountServiceAccountToken": False,
        "hostNetwork": True,
        "hostPID": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "terminationGracePeriodSeconds": 30,
        **extra,
        "containers": [container],
        "volumes": [*volumes, {"name": "machine-id", "hostPath": {"path": "/etc/machine-id", "type": "File"}}],
    }


def _common_objects(base_url: str, token: str, namespace: str) -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": APP}
    meta = {"name": APP, "namespace": namespace, "labels": labels}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque",
         "stringData": {"server": base_url.rstrip("/"), "token": token}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, "automountServiceAccountToken": False},
    ]


def kubernetes_objects(base_url: str, token: str, namespace: str = "hostbench",
                       image: str = "hostbench-runner:latest",
                       node_selector: dict[str, str] | None = None) -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": APP}
    meta = {"name": APP, "namespace": namespace, "labels": labels}
    pod = _pod_spec(_runner_container(image),
                    [{"name": "state", "hostPath": {"path": NODE_STATE, "type": "DirectoryOrCreate"}}],
                    nodeSelector=node_selector or {"kubernetes.io/os": "linux"})
    return [
        *_common_objects(base_url, token, namespace),
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
         "spec": {"selector": {"matchLabels": labels},
                  "updateStrategy": {"type": "RollingUpdate"},
                  "template": {"metadata": {"labels": labels}, "spec": pod}}},
    ]


# A one-shot Job's pod: how long it may wait for work (the runner's --once-wait) and run in all, and how long the
# finished Job stays for `kubectl logs` before Kubernetes removes it.
JOB_DEADLINE_S = 3600
JOB_TTL_S = 3600


def job_name(node: str) -> str:
    """A Job's name for a node: DNS-1123, at most 63 characters, unique per node (a digest when shortened)."""
    import hashlib

    base = re.sub(r"[^a-z0-9-]+", "-", node.lower()).strip("-") or "node"
    name = f"{APP}-once-{base}"
    if len(name) > 63:
        name = f"{name[:54].rstrip('-')}-{hashlib.sha256(node.encode()).hexdigest()[:8]}"
    return name


def kubernetes_job_objects(base_url: str, token: str, nodes: list[str], namespace: str = "hostbench",
                           image: str = "hostbench-runner:latest") -> list[dict[str, Any]]:
    """A one-shot runner per named node, as for Slurm: a Job whose pod is bound to that node (spec.nodeName, so
    no scheduler is needed), runs `hostbench_runner --once` (joins, runs what the server gives this host, uploads,
    leaves) and is not restarted; nothing stays on the node. Make the token with one use per node."""
    labels = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": "once"}
    jobs = []
    for node in nodes:
        pod = _pod_spec(_runner_container(image, once=True), [], nodeName=node, restartPolicy="Never")
        jobs.append({"apiVersion": "batch/v1", "kind": "Job",
                     "metadata": {"name": job_name(node), "namespace": namespace, "labels": labels},
                     "spec": {"backoffLimit": 0, "activeDeadlineSeconds": JOB_DEADLINE_S,
                              "ttlSecondsAfterFinished": JOB_TTL_S,
                              "template": {"metadata": {"labels": labels}, "spec": pod}}})
    return [*_common_objects(base_url, token, namespace), *jobs]


def kubernetes_jobs_manifest(base_url: str, token: str, nodes: list[str], namespace: str = "hostbench",
                             image: str = "hostbench-runner:latest") -> str:
    """`kubectl apply -f` it; the Jobs end by themselves; `kubectl delete -f` it removes what is left."""
    return "".join("---\n" + to_yaml(o) for o in kubernetes_job_objects(base_url, token, nodes, namespace, image))


def kubernetes_manifest(base_url: str, token: str, namespace: str = "hostbench",
                        image: str = "hostbench-runner:latest") -> str:
    """`kubectl apply -f` it; `kubectl delete -f` it (or the namespace) removes it."""
    return "".join("---\n" + to_yaml(o) for o in kubernetes_objects(base_url, token, namespace, image))


def to_yaml(value: Any, indent: int = 0) -> str:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return pad + "{}\n"
        out = []
        for k, v in value.items():
            key = str(k) if _PLAIN.match(str(k)) and str(k).lower() not in _YAML_WORDS else json.dumps(str(k))
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{key}:\n{to_yaml(v, indent + 2)}")
            else:
                out.append(f"{pad}{key}: {_scalar(v)}\n")
        return "".join(out)
    if isinstance(value, list):
        if not value:
            return pad + "[]\n"
        out = []
        for v in value:
            if isinstance(v, (dict, list)) and v:
                inner = to_yaml(v, indent + 2)
                out.append(f"{pad}- {inner[indent + 2:]}")
            else:
                out.append(f"{pad}- {_scalar(v)}\n")
        return "".join(out)
    return pad + _scalar(value) + "\n"


def _scalar(v: Any) -> str:
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return json.dumps(v)  # strings quoted, true/false, null, numbers: all read back by YAML as they were
