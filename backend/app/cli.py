"""Backend admin commands: `python -m app.cli token|user-add|api-token|sign-in-link|bootstrap-admin|routes|openapi`.
They talk to the database named by DATABASE_URL; `./hostbench` finds the embedded one and sets it."""
import argparse
import json
import sys


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.cli")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("token", help="create a single-use runner registration token")
    t.add_argument("--ttl-s", type=float, default=None)
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
    from app.hosts.service import create_registration_token
    from app.users import service as users

    with get_sessionmaker()() as session:
        try:
            if args.cmd == "token":
                token, _ = create_registration_token(session, args.ttl_s, created_by="cli")
                print(token)
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
