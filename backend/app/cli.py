"""Backend admin commands: `python -m app.cli token|user-add|api-token|sign-in-link|bootstrap-admin|routes|openapi`.
They talk to the database named by DATABASE_URL; `./hostbench` finds the embedded one and sets it."""
import argparse
import json
import sys
from collections.abc import Callable
from typing import Any


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 1


# ./hostbench token --form: the token, or one of InstallForms' fields by a shorter name, or all of them.
FORMS = ("token", "install", "container", "shell", "cloud-init", "kubernetes", "kubernetes-job", "all")
FORM_FIELDS = {"install": "install_command", "container": "container_command", "shell": "shell_command",
               "cloud-init": "cloud_init", "kubernetes": "kubernetes_manifest", "kubernetes-job": "kubernetes_jobs"}


def _token(session: Any, args: argparse.Namespace) -> str:
    """A registration token made as POST /api/hosts/registration-tokens makes it (its body's bounds), printed as
    --form says; the forms use the server's public URL (HOSTBENCH_PUBLIC_URL)."""
    from pydantic import ValidationError

    from app.audit.service import record
    from app.core.config import get_settings
    from app.core.errors import BadRequest
    from app.hosts import enrol
    from app.hosts.router import install_forms, runner_url_for
    from app.hosts.schemas import RegistrationTokenCreate

    labels = dict(kv.split("=", 1) for kv in args.label if "=" in kv)
    if len(labels) != len(args.label):
        raise BadRequest(f"--label wants key=value, got {[kv for kv in args.label if '=' not in kv]}")
    fields: dict[str, Any] = {"uses": None if args.uses == "unlimited" else args.uses, "name": args.name,
                              "labels": labels}
    ttl_s = args.ttl_s if args.expires is None else args.expires
    if ttl_s is not None:
        fields["ttl_s"] = ttl_s
    fields.update({k: v for k, v in (("namespace", args.namespace), ("image", args.image), ("nodes", args.node)) if v})
    try:
        body = RegistrationTokenCreate.model_validate(fields)
    except ValidationError as exc:
        raise BadRequest("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from exc
    token, row = enrol.create(session, body.ttl_s if ttl_s is not None else None, "cli", body.uses, body.name,
                              body.labels)
    record(session, "cli", "host.registration_token", f"token {row.id}", expires_at=row.expires_at.isoformat(),
           uses=body.uses, name=body.name, labels=body.labels)
    session.commit()
    if args.form == "token":
        return token
    base = runner_url_for((get_settings().hostbench_public_url or "http://localhost:8000").rstrip("/"))
    forms = install_forms(base, token, body.namespace, body.image, body.nodes)
    if args.form != "all":
        return forms[FORM_FIELDS[args.form]]
    uses = "unlimited" if row.uses_left is None else row.uses_left
    named = f" ({row.name})" if row.name else ""
    head = f"# token {row.id}{named}: {token}\n# uses left: {uses}; expires {row.expires_at.isoformat()}"
    return "\n\n".join([head] + [f"# {name}\n{forms[field]}" for name, field in FORM_FIELDS.items() if forms[field]])


def duration_s(text: str) -> float:
    """--expires: 900, 30m, 12h, 7d, in seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    t = text.strip().lower()
    try:
        return float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seconds or a number with s, m, h or d (7d), got {text!r}") from None


# The admin commands that ./hostbench also offers, declared once, here: `python -m app.cli` parses with them, and
# ./hostbench (hostbench_cli) declares its `token`, `user add`, `api-token` and `sign-in-link` with them, then hands
# the same words to `python -m app.cli` on the database it found.
def _token_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ttl-s", type=float, default=None, help="seconds it stays valid (default: the server's)")
    p.add_argument("--expires", type=duration_s, default=None, metavar="DURATION",
                   help="how long it stays valid: 900, 30m, 12h, 7d (the same as --ttl-s)")
    p.add_argument("--uses", default="1", metavar="N|unlimited", help="how many runners may join with it (1)")
    p.add_argument("--name", default=None, help="what it is for, shown in the dashboard's token list")
    p.add_argument("--label", action="append", default=[], metavar="K=V",
                   help="a label for every host that joins with it (repeatable)")
    p.add_argument("--form", default="token", choices=FORMS,
                   help="print the token (default), one install form with it, or all (docs/fleet.md)")
    p.add_argument("--namespace", default=None, help="the Kubernetes manifest's namespace (hostbench)")
    p.add_argument("--image", default=None, help="the Kubernetes manifest's runner image (hostbench-runner:latest)")
    p.add_argument("--node", action="append", default=[], metavar="NODE",
                   help="a Kubernetes node for --form kubernetes-job: a one-shot Job bound to it (repeatable)")


def _user_add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name")
    p.add_argument("--role", choices=["viewer", "operator", "admin"], required=True)
    p.add_argument("--api-token", metavar="LABEL", default=None,
                   help="also print a new personal API token of this name for the user (last line)")


def _api_token_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name")
    p.add_argument("--label", default="cli", help="the token's name, shown in the dashboard")


def _sign_in_link_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name")


# name -> (what it does, its arguments)
ADMIN_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "token": ("print a new runner registration token (single use unless --uses), or the ways to install runners "
              "with it (--form)", _token_arguments),
    "user-add": ("create a user; password on stdin (typed, unechoed, at a terminal); an empty one prints a one-time "
                 "sign-in link instead", _user_add_arguments),
    "api-token": ("print a new personal API token for a user (Authorization: Bearer ...)", _api_token_arguments),
    "sign-in-link": ("print a new one-time sign-in link for a user", _sign_in_link_arguments),
}


def add_admin_command(sub: "argparse._SubParsersAction[argparse.ArgumentParser]", command: str,
                      name: str | None = None) -> argparse.ArgumentParser:
    """Declare the admin command `command` in `sub` (as `name`, where the caller calls it otherwise)."""
    what, arguments = ADMIN_COMMANDS[command]
    p = sub.add_parser(name or command, help=what)
    arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.cli")
    sub = p.add_subparsers(dest="cmd", required=True)
    for command in ADMIN_COMMANDS:
        add_admin_command(sub, command)
    sub.add_parser("bootstrap-admin", help="when nobody exists yet, create 'admin' and print a sign-in path")
    sub.add_parser("routes", help="print every route and who may call it (Markdown)")
    sub.add_parser("openapi", help="print the OpenAPI document")
    args = p.parse_args(argv)
    if args.cmd == "openapi":
        from app.main import app

        json.dump(app.openapi(), sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    if args.cmd == "routes":
        print(route_table())
        return 0

    from app.audit.service import record
    from app.core.db import get_sessionmaker
    from app.core.errors import HostbenchError
    from app.users import service as users

    with get_sessionmaker()() as session:
        try:
            if args.cmd == "token":
                print(_token(session, args))
            elif args.cmd == "user-add":
                password = sys.stdin.read().rstrip("\r\n") if not sys.stdin.isatty() else ""
                if password and len(password) < 10:
                    return _fail("a password needs at least 10 characters")
                created = users.create_user(session, args.name, args.role, password or None)
                record(session, "cli", "user.create", f"user {created.name}", role=created.role)
                session.commit()
                if not password:
                    print(users.create_sign_in_link(session, created))
                if args.api_token:
                    token, _ = users.create_api_token(session, created, args.api_token, None)
                    record(session, "cli", "api_token.create", f"token of {created.name}", name=args.api_token)
                    session.commit()
                    print(token)
            elif args.cmd in ("api-token", "sign-in-link"):
                user = users.user_by_name(session, args.name)
                if user is None:
                    return _fail(f"no user named {args.name!r}")
                if args.cmd == "api-token":
                    token, _ = users.create_api_token(session, user, args.label, None)
                    record(session, "cli", "api_token.create", f"token of {user.name}", name=args.label)
                    session.commit()
                    print(token)
                else:
                    print(users.create_sign_in_link(session, user))
            elif args.cmd == "bootstrap-admin":
                link = users.bootstrap_admin(session)
                if link:
                    print(link)
        except HostbenchError as exc:
            return _fail(exc.detail)
    return 0


def route_table() -> str:
    from app.core.routes import api_routes, route_access
    from app.main import app

    lines = ["| method | path | who may call it |", "|---|---|---|"]
    for route in sorted((r for r in api_routes(app.routes) if r.include_in_schema),
                        key=lambda r: (r.path_format, sorted(r.methods or ()))):
        for method in sorted(route.methods or ()):
            lines.append(f"| {method} | `{route.path_format}` | {route_access(route) or 'UNDECLARED'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
