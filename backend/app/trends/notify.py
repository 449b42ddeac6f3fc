"""Notifications of trend events: a webhook POST (the URL an admin set) and an e-mail (only with an SMTP server
configured). Sent from a Celery task (app.worker.tasks.notify_trend_event), never from a request or from ingest.

The webhook's target is checked when it is set and again at every delivery: http or https, no credentials in the
URL, and every address its name resolves to must be allowed: never link-local (169.254.0.0/16, fe80::/10, which
holds the cloud metadata services 169.254.169.254 and fd00:ec2::254 is refused by name too), multicast, unspecified
or reserved, nor an IPv6 form that embeds an IPv4 address (EMBEDDED_IPV4: 6to4, NAT64, mapped, compatible,
Teredo); with HOSTBENCH_WEBHOOK_ALLOWED_HOSTS set, only the hosts it lists; without it, only public addresses.
The connection goes to the address that was checked (the name is sent as Host and as TLS SNI), so a name that
resolves differently a moment later (DNS rebinding) cannot steer it elsewhere. No redirects are followed."""
import ipaddress
import json
import smtplib
import socket
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy.orm import Session

from app.core.config import Settings, get_settings
from app.core.db import utcnow
from app.hosts.models import Host
from app.trends.models import TrendEvent, TrendNotify

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"),
            ipaddress.ip_address("100.100.100.200")}
METADATA_NAMES = {"metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal"}
# IPv6 ranges that carry an IPv4 address inside them, which a relay, a NAT64 gateway or the host's own stack may
# turn back into that IPv4 address (2002:7f00:1::, 64:ff9b::a9fe:a9fe, ::ffff:10.0.0.1 reach 127.0.0.1,
# 169.254.169.254, 10.0.0.1). Refused outright, whatever they embed and whatever the allow-list says: a webhook
# that means an IPv4 address is given that address.
EMBEDDED_IPV4 = tuple(ipaddress.ip_network(n) for n in (
    "2002::/16",  # 6to4
    "64:ff9b::/96", "64:ff9b:1::/48",  # NAT64, well-known and local-use prefixes
    "::ffff:0:0/96",  # IPv4-mapped
    "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
    "::/96",  # IPv4-compatible (deprecated; also holds :: and ::1)
    "2001::/32",  # Teredo
))


class Refused(ValueError):
    pass


def smtp_note(s: Settings | None = None) -> str | None:
    s = s or get_settings()
    return None if s.hostbench_smtp_host else "SMTP is not configured (HOSTBENCH_SMTP_HOST is unset): no e-mail is sent"


def _never(ip: IpAddress) -> str | None:
    if ip in METADATA:
        return "a cloud metadata address"
    if ip.version == 6 and any(ip in net for net in EMBEDDED_IPV4):
        return "an IPv6 form that embeds an IPv4 address (6to4, NAT64, IPv4-mapped, -compatible or Teredo)"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return "a multicast, unspecified or reserved address"
    mapped = getattr(ip, "ipv4_mapped", None)
    return _never(mapped) if mapped is not None else None


def check_url(url: str, resolve: bool = True) -> tuple[str, int, list[IpAddress]]:
    """(host, port, the addresses it may be reached at), or Refused with the reason."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise Refused(f"not a URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise Refused("the webhook URL must be http:// or https://")
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise Refused("the webhook URL has no host")
    if parts.username is not None or parts.password is not None:
        raise Refused("no credentials in the webhook URL (put a secret in its path or query instead)")
    if host in METADATA_NAMES:
        raise Refused(f"{host} is a cloud metadata service")
    allowed = get_settings().webhook_allowed_hosts
    if not resolve:
        return host, port, []
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Refused(f"{host} does not resolve: {exc}") from None
    addresses: list[IpAddress] = []
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if ip not in addresses:
            addresses.append(ip)
    for ip in addresses:
        why = _never(ip)
        if why:
            raise Refused(f"{host} resolves to {ip}, {why}: never a webhook target")
        if allowed:
            if host not in allowed and str(ip) not in allowed:
                raise Refused(f"{host} is not in HOSTBENCH_WEBHOOK_ALLOWED_HOSTS")
        elif not ip.is_global:
            raise Refused(f"{host} resolves to {ip}, a private or loopback address; list it in "
                          "HOSTBENCH_WEBHOOK_ALLOWED_HOSTS to allow it")
    if not addresses:
        raise Refused(f"{host} has no address")
    return host, port, addresses


def payload(e: TrendEvent, host_name: str) -> dict[str, Any]:
    return {"type": "hostbench.trend_event", "id": e.id, "at": e.at.isoformat(), "kind": e.kind, "text": e.text,
            "host": {"id": e.host_id, "name": host_name}, "run_id": e.run_id,
            "metric": {"experiment": e.experiment, "op": e.op, "threads": e.threads, "block_bytes": e.block_bytes},
            "value": e.value, "unit": e.unit, "threshold_id": e.threshold_id}


@dataclass
class Outcome:
    status: str  # sent | failed | pending (to be retried)
    detail: str


def post_webhook(url: str, body: dict[str, Any], final: bool) -> Outcome:
    import httpx  # here, not at import: httpx loads its command line (rich, pygments, click), a tenth of the API's
    # start-up CPU, and only a webhook needs it

    s = get_settings()
    try:
        host, port, addresses = check_url(url)
    except Refused as exc:
        return Outcome("failed", f"refused: {exc}")
    parts = urlsplit(url)
    ip = addresses[0]
    netloc = (f"[{ip}]" if ip.version == 6 else str(ip)) + (f":{parts.port}" if parts.port else "")
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    headers = {"Host": parts.netloc.rsplit("@", 1)[-1], "Content-Type": "application/json",
               "User-Agent": f"hostbench/{s.hostbench_version}"}
    extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
    try:
        with httpx.Client(timeout=s.webhook_timeout_s, follow_redirects=False, trust_env=False) as c:
            r = c.post(pinned, content=json.dumps(body).encode(), headers=headers, extensions=extensions)
    except httpx.HTTPError as exc:
        why = f"{host}:{port}: {type(exc).__name__}: {str(exc)[:200]}"
        return Outcome("failed" if final else "pending", why)
    if 200 <= r.status_code < 300:
        return Outcome("sent", f"HTTP {r.status_code}")
    retryable = r.status_code in (408, 429) or r.status_code >= 500
    return Outcome("pending" if retryable and not final else "failed", f"HTTP {r.status_code}: {r.text[:200]}")


def send_mail(to: str, e: TrendEvent, host_name: str, final: bool) -> Outcome:
    s = get_settings()
    if not s.hostbench_smtp_host:
        return Outcome("skipped", smtp_note(s) or "")
    msg = EmailMessage()
    msg["From"], msg["To"] = s.hostbench_smtp_from, to
    msg["Subject"] = f"hostbench: {e.kind} on {host_name}"
    msg.set_content(f"{e.text}\n\nrun {e.run_id}, {e.at.isoformat()}\n")
    try:
        with smtplib.SMTP(s.hostbench_smtp_host, s.hostbench_smtp_port, timeout=s.webhook_timeout_s) as smtp:
            if s.hostbench_smtp_starttls:
                smtp.starttls()
            if s.hostbench_smtp_user:
                smtp.login(s.hostbench_smtp_user, s.hostbench_smtp_password or "")
            smtp.send_message(msg)
    except (OSError, smtplib.SMTPException) as exc:
        return Outcome("failed" if final else "pending", f"{type(exc).__name__}: {str(exc)[:200]}")
    return Outcome("sent", f"to {to}")


def initial_statuses(cfg: TrendNotify | None) -> tuple[tuple[str, str | None], tuple[str, str | None]]:
    """A new event's (webhook, e-mail) status: pending where there is somewhere to send it, else skipped and why."""
    hook: tuple[str, str | None] = ("pending", None) if cfg and cfg.webhook_url else \
        ("skipped", "no webhook URL is set (an admin sets it on the Trends page)")
    note = smtp_note()
    mail: tuple[str, str | None] = ("skipped", note) if note else \
        (("pending", None) if cfg and cfg.email_to else ("skipped", "no e-mail address is set"))
    return hook, mail


def notify_config(session: Session) -> TrendNotify | None:
    return session.get(TrendNotify, 1)


def set_config(session: Session, webhook_url: str | None, email_to: str | None, by: str) -> TrendNotify:
    cfg = notify_config(session) or TrendNotify(id=1)
    cfg.webhook_url, cfg.email_to, cfg.updated_by, cfg.updated_at = webhook_url or None, email_to or None, by, utcnow()
    session.add(cfg)
    return cfg


def deliver(session: Session, event_id: int, final: bool) -> bool:
    """Send what is still pending for an event; True when something should be tried again later."""
    e = session.get(TrendEvent, event_id, with_for_update=True)
    if e is None:
        return False
    host = session.get(Host, e.host_id)
    name = host.name if host else str(e.host_id)
    cfg = notify_config(session)
    if e.webhook_status == "pending":
        if cfg is None or not cfg.webhook_url:
            e.webhook_status, e.webhook_detail = "skipped", "no webhook URL is set"
        else:
            o = post_webhook(cfg.webhook_url, payload(e, name), final)
            e.webhook_status, e.webhook_detail = o.status, o.detail[:500]
    if e.email_status == "pending":
        if cfg is None or not cfg.email_to:
            e.email_status, e.email_detail = "skipped", "no e-mail address is set"
        else:
            o = send_mail(cfg.email_to, e, name, final)
            e.email_status, e.email_detail = o.status, o.detail[:500]
    again = "pending" in (e.webhook_status, e.email_status)
    session.commit()
    return again
