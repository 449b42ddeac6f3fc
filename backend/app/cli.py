"""Backend admin commands: `python -m app.cli token|user-add|api-token|sign-in-link|bootstrap-admin|routes|openapi`.
They talk to the database named by DATABASE_URL; `./hostbench` finds the embedded one and sets it."""
import argparse
import json
import sys
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
    if args.ttl_s is not None:
        fields["ttl_s"] = args.ttl_s
    fields.update({k: v for k, v in (("namespace", args.namespace), ("image", args.image), ("nodes", args.node)) if v})
    try:
        body = RegistrationTokenCreate.model_validate(fields)
    except ValidationError as exc:
        raise BadRequest("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from exc
    token, row = enrol.create(session, body.ttl_s if args.ttl_s is not None else None, "cli", body.uses, body.name,
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.cli")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("token", help="create a runner registration token (single use unless --uses)")
    t.add_argument("--ttl-s", type=float, default=None)
    t.add_argument("--uses", default="1", help="how many runners may join with it: a number or 'unlimited'")
    t.add_argument("--name", default=None)
    t.add_argument("--label", action="append", default=[], metavar="K=V")
    t.add_argument("--namespace", default=None)
    t.add_argument("--image", default=None)
    t.add_argument("--node", action="append", default=[], help="a Kubernetes node for --form kubernetes-job")
    t.add_argument("--form", choices=FORMS, default="token",
                   help="what to print: the token (default), one install form, or all of them")
    u = sub.add_parser("user-add", help="create a user; the password is read from stdin (empty: a sign-in link)")
    u.add_argument("name")
    u.add_argument("--role", choices=["viewer", "operator", "admin"], required=True)
    u.add_argument("--api-token", metavar="LABEL", default=None,
                   help="also print a new personal API token of this name for the user (last line)")
    a = sub.add_parser("api-token", help="print a new personal API token for a user")
    a.add_argument("name")
    a.add_argument("--label", default="cli", help="the token's name, shown in the dashboard")
    s = sub.add_parser("sign-in-link", help="print a new one-time sign-in path for a user")
    s.add_argument("name")
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
