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


def kubernetes_objects(base_url: str, token: str, namespace: str = "hostbench",
                       image: str = "hostbench-runner:latest",
                       node_selector: dict[str, str] | None = None) -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": APP}
    meta = {"name": APP, "namespace": namespace, "labels": labels}
    secret_env = [{"name": env, "valueFrom": {"secretKeyRef": {"name": APP, "key": key}}}
                  for env, key in (("HOSTBENCH_SERVER", "server"), ("HOSTBENCH_REGISTRATION_TOKEN", "token"))]
    container = {
        "name": "runner",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "env": secret_env + [{"name": "HOSTBENCH_RUNNER_NAME",
                              "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        # Requests only: a CPU or memory limit would throttle the very benchmark it runs.
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "securityContext": {"privileged": False, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": False},
        "volumeMounts": [{"name": "state", "mountPath": IMAGE_STATE},
                         {"name": "machine-id", "mountPath": "/etc/machine-id", "readOnly": True}],
    }
    pod = {
        "serviceAccountName": APP,
        "automountServiceAccountToken": False,
        "hostNetwork": True,
        "hostPID": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "nodeSelector": node_selector or {"kubernetes.io/os": "linux"},
        "terminationGracePeriodSeconds": 30,
        "containers": [container],
        "volumes": [{"name": "state", "hostPath": {"path": NODE_STATE, "type": "DirectoryOrCreate"}},
                    {"name": "machine-id", "hostPath": {"path": "/etc/machine-id", "type": "File"}}],
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque",
         "stringData": {"server": base_url.rstrip("/"), "token": token}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, "automountServiceAccountToken": False},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
         "spec": {"selector": {"matchLabels": labels},
                  "updateStrategy": {"type": "RollingUpdate"},
                  "template": {"metadata": {"labels": labels}, "spec": pod}}},
    ]


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
