"""The runner's own credential (docs/reliability.md, rule 3): obtained once with a registration token,
kept in <state>/credential.json with mode 0600, reused on every later start."""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__, config
from .api import ApiClient, Backoff, call_with_retry
from .errors import ConfigError, Rejected, Unauthorized
from .spool import atomic_write

log = logging.getLogger("hostbench.credential")


@dataclass(frozen=True)
class Credential:
    host_id: Any
    runner_token: str

    def __repr__(self) -> str:  # never print the token
        return f"Credential(host_id={self.host_id!r}, runner_token=***)"


def load(path: Path) -> Credential | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("credential file %s was readable by others; mode set to 0600", path)
        os.chmod(path, 0o600)
    try:
        doc = json.loads(path.read_text())
        cred = Credential(host_id=doc["host_id"], runner_token=doc["runner_token"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"credential file {path} is unreadable ({exc}); delete it and register again") from exc
    if not isinstance(cred.runner_token, str) or not cred.runner_token:
        raise ConfigError(f"credential file {path} has no runner_token; delete it and register again")
    return cred


def save(path: Path, cred: Credential) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = json.dumps({"host_id": cred.host_id, "runner_token": cred.runner_token}).encode()
    atomic_write(path, body, mode=0o600)
    os.chmod(path, 0o600)


def obtain(
    path: Path,
    api: ApiClient,
    registration_token: str | None,
    name: str,
    labels: dict[str, str],
    inventory: dict[str, Any],
    stop: threading.Event,
    backoff: Backoff,
    give_up_after_s: float | None = None,
) -> Credential:
    """The stored credential, or a new one from POST /api/runners/register."""
    cred = load(path)
    if cred is not None:
        log.info("using stored credential host_id=%s from %s", cred.host_id, path)
        if registration_token:
            log.info("a registration token was given but is not needed: already registered")
        return cred
    if not registration_token:
        raise ConfigError(
            f"not registered yet and no registration token: pass --registration-token "
            f"(or HOSTBENCH_REGISTRATION_TOKEN); the credential will be stored in {path}"
        )
    body = {
        "registration_token": registration_token,
        "name": name,
        "hostname": socket.gethostname(),
        "version": __version__,
        "inventory": inventory,
        "labels": labels,
    }
    mid = machine_id()
    if mid:
        body["machine_id"] = mid  # joining again from this machine: the server gives its host back
    try:
        answer = call_with_retry(lambda: api.register(body), backoff, stop, "register", give_up_after_s)
    except Unauthorized as exc:
        raise Unauthorized(f"registration token refused (bad or expired): {exc}") from exc
    except Rejected as exc:
        raise ConfigError(f"registration refused by the server: {exc}") from exc
    if not isinstance(answer, dict) or not answer.get("runner_token") or "host_id" not in answer:
        raise ConfigError("registration answer has no host_id/runner_token")
    cred = Credential(host_id=answer["host_id"], runner_token=str(answer["runner_token"]))
    save(path, cred)
    log.info("registered as host_id=%s; credential stored in %s", cred.host_id, path)
    return cred


MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


def machine_id() -> str | None:
    """This machine's id (systemd's /etc/machine-id; HOSTBENCH_MACHINE_ID wins, for a host without one)."""
    given = config.machine_id_given()
    if given:
        return given[:64]
    for f in MACHINE_ID_FILES:
        try:
            text = Path(f).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text and len(text) <= 64 and text.isalnum():
            return text
    return None

