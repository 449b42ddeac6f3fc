"""Backend admin commands: `python -m app.cli token|openapi`."""
import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.cli")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("token", help="create a short-lived runner registration token")
    t.add_argument("--ttl-s", type=float, default=None)
    sub.add_parser("openapi", help="print the OpenAPI document")
    args = p.parse_args(argv)
    if args.cmd == "token":
        from app.core.db import get_sessionmaker
        from app.hosts.service import create_registration_token

        with get_sessionmaker()() as session:
            print(create_registration_token(session, args.ttl_s))
    elif args.cmd == "openapi":
        from app.main import app

        json.dump(app.openapi(), sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
