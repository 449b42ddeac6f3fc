"""Every environment variable `./hostbench` reads, declared once (name, type, default, what it does), read into one
typed object: `load()`. The server's own variables are the backend's settings object (backend/app/core/config.py);
the runner's are its `config.Settings`. The README's settings table is made from this module and the backend's
(`python -m hostbench_stack.settings --write`; stack/tests/test_settings.py fails while they differ).

A variable the CLI only hands to a process it starts (the stack's children read their own) is not read here."""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BEGIN, END = "<!-- settings table: python -m hostbench_stack.settings --write -->", "<!-- end of the settings table -->"


class SettingError(ValueError):
    """A variable set to something it cannot be: the message names it and its value."""


def _port(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(f"{name}={raw!r} is not a port number") from None
    if not 1 <= value <= 65535:
        raise SettingError(f"{name}={raw!r} is not a port number (1..65535)")
    return value


def _workers(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(f"{name}={raw!r} is not a whole number") from None
    if not 1 <= value <= 64:
        raise SettingError(f"{name}={value} is outside 1..64")
    return value


def _seconds(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise SettingError(f"{name}={raw!r} is not a number of seconds") from None
    if not value > 0:
        raise SettingError(f"{name}={raw!r} must be above 0")
    return value


def _count(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(f"{name}={raw!r} is not a whole number") from None
    if value < 0:
        raise SettingError(f"{name}={raw!r} must be 0 or more")
    return value


def _text(_: str, raw: str) -> str:
    return raw


def _url(_: str, raw: str) -> str:
    return raw.rstrip("/")


def _words(_: str, raw: str) -> tuple[str, ...]:
    return tuple(raw.split())


def var(env: str, parse: Callable[[str, str], Any], default: Any, shown: str, effect: str, *,
        readme: bool = True) -> Any:
    """A field of Settings: read from `env` with `parse`, `default` when unset or empty; README row: shown, effect."""
    return field(default=default, metadata={"env": env, "parse": parse, "shown": shown, "effect": effect,
                                            "readme": readme})


@dataclass(frozen=True)
class Settings:
    port: int = var("HOSTBENCH_PORT", _port, 8000, "8000", "port of the API and dashboard")
    api_workers: int | None = var(
        "HOSTBENCH_API_WORKERS", _workers, None, "half the CPUs (2 to 8)",
        "API processes for the dashboard ([docs/scaling.md](docs/scaling.md))")
    control_workers: int | None = var(
        "HOSTBENCH_CONTROL_WORKERS", _workers, None, "half the CPUs (2 to 8)",
        "API processes for the runners ([docs/scaling.md](docs/scaling.md))")
    runner_port: int | None = var(
        "HOSTBENCH_RUNNER_PORT", _port, None, "`HOSTBENCH_PORT` + 1",
        "port of the runners' own API process (claims, leases, samples): a dashboard stampede cannot take the CPU "
        "a lease renewal needs ([docs/architecture.md](docs/architecture.md#concurrency)); \"Add host\" hands it "
        "out")
    start_stall_s: float = var(
        "HOSTBENCH_START_STALL_S", _seconds, 300.0, "300",
        "start-up (`up`, the tests' stacks, chaos, load) fails when a process still starting has used no CPU and "
        "written nothing to its log for this many seconds; a slow one is waited for")
    bind: str = var("HOSTBENCH_BIND", _text, "127.0.0.1", "127.0.0.1",
                    "address to listen on (use 0.0.0.0 to accept runners from other hosts)")
    public_url: str | None = var(
        "HOSTBENCH_PUBLIC_URL", _url, None, "the URL served",
        "the address people and runners use, e.g. `https://bench.example.org` behind a proxy (sign-in links and "
        "\"Add host\" commands are built from it; bound to 0.0.0.0 and unset, the address a request came to)")
    trusted_proxies: str = var(
        "HOSTBENCH_TRUSTED_PROXIES", _text, "", "none",
        "addresses of reverse proxies whose `X-Forwarded-For` is believed (uvicorn `--forwarded-allow-ips`); "
        "unset, proxy headers are ignored")
    database_url: str | None = var(
        "DATABASE_URL", _text, None, "embedded",
        "an external PostgreSQL, e.g. `postgresql+psycopg://user:password@db:5432/hostbench`")
    redis_url: str | None = var("REDIS_URL", _text, None, "embedded",
                                "an external Redis, e.g. `redis://:password@cache:6379/0`")
    server_url: str | None = var(
        "HOSTBENCH_SERVER_URL", _url, None, "the local `up`",
        "the server `runs`, `run`, `wait` and the other client commands talk to (or `--server`)")
    token: str | None = var("HOSTBENCH_TOKEN", _text, None, "none",
                            "the API token of those commands (or `--token`; `./hostbench api-token NAME` prints one)")
    bench_dir: str | None = var("HOSTBENCH_BENCH_DIR", _text, None, "`.hostbench/bench`",
                                "where `./hostbench bench disk` puts its test files")
    backend_workers: int = var("HOSTBENCH_BACKEND_WORKERS", _count, 0, "2 (or the CPUs, if fewer)",
                               "pytest-xdist processes of `./hostbench test`'s backend suite")
    e2e_only: tuple[str, ...] = var("HOSTBENCH_E2E_ONLY", _words, (), "all",
                                    "the browser suite's spec files to run (names, space-separated)")
    node: str = var("HOSTBENCH_NODE", _text, "", "the system's, if recent",
                    "`wheel`: build the dashboard with Node from PyPI even when the system has one")
    # Set by the ./hostbench script before it installs anything, so that every step's clock starts there.
    t0: str = var("HOSTBENCH_T0", _text, "", "", "", readme=False)


def load(env: Mapping[str, str] | None = None) -> Settings:
    """The variables as the environment (os.environ unless given) sets them; SettingError names a bad one."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for f in fields(Settings):
        raw = env.get(f.metadata["env"], "").strip()
        if raw:
            values[f.name] = f.metadata["parse"](f.metadata["env"], raw)
    return Settings(**values)


def env_name(attr: str) -> str:
    """The variable behind a field: env_name("port") == "HOSTBENCH_PORT"."""
    return next(f.metadata["env"] for f in fields(Settings) if f.name == attr)


def _backend_rows() -> list[tuple[str, str, str]]:
    """The server's settings that the README lists: the backend's fields with json_schema_extra `readme`."""
    sys.path.insert(0, str(ROOT / "backend"))
    from app.core.config import Settings as Server  # the backend's; only this table needs it, not ./hostbench

    rows = []
    for name, info in Server.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if extra.get("readme"):
            rows.append((name.upper(), str(extra.get("shown", info.default)), str(info.description or "")))
    return rows


def readme_table() -> str:
    rows = [(f.metadata["env"], f.metadata["shown"], f.metadata["effect"]) for f in fields(Settings)
            if f.metadata["readme"]]
    lines = ["| variable | default | effect |", "|---|---|---|"]
    lines += [f"| `{name}` | {shown} | {effect} |" for name, shown, effect in rows + _backend_rows()]
    return "\n".join(lines)


def readme_with_table(text: str) -> str:
    block = re.compile(re.escape(BEGIN) + r"\n.*?\n" + re.escape(END), re.S)
    if not block.search(text):
        raise SettingError(f"README.md has no settings table between {BEGIN!r} and {END!r}")
    return block.sub(lambda _: f"{BEGIN}\n{readme_table()}\n{END}", text)


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        README.write_text(readme_with_table(README.read_text()))
        return 0
    print(readme_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
