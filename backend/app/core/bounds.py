"""The bounds every request is held to, defined once (docs/reliability.md, rule 8 "every resource is bounded").

Ids: every table's primary key is a PostgreSQL `integer`, so an id outside 1..2^31-1 cannot exist; a path, query
or body id outside that range is refused with 422 by validation instead of reaching the database (where it
raised "integer out of range": a 500). Use `Id` for path and query parameters and `BodyId` in JSON bodies.
"""
import json
import re
from typing import Annotated, Any

from annotated_types import Ge, Le
from pydantic import AfterValidator, AllowInfNan, BeforeValidator


def _json_number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("expected a JSON number")
    return value


# JSON numbers as JSON Schema (and so the OpenAPI document) defines them: 3 and 3.0 are the same integer; "3",
# true and null are not numbers. (pydantic's strict int refuses 3.0; its lax int and float take "3".)
# Constraints go before JSON_NUMBER in an Annotated (Annotated[int, Field(ge=1), JSON_NUMBER]): after a validator,
# pydantic writes them into the JSON schema as "ge"/"le", which no client reads as bounds.
JSON_NUMBER = BeforeValidator(_json_number)
JsonInt = Annotated[int, JSON_NUMBER]
# Finite only: NaN and ±Infinity are refused (app.core.body refuses them in any JSON body first).
JsonNumber = Annotated[float, AllowInfNan(False), JSON_NUMBER]

MAX_ID = 2**31 - 1
Id = Annotated[int, Ge(1), Le(MAX_ID)]
BodyId = Annotated[int, Ge(1), Le(MAX_ID), JSON_NUMBER]

# The largest pages the API answers: GET /api/runs (runs) and GET /api/runs/{id}/samples (samples). ./hostbench's
# remote client pages by them (hostbench_cli.remote).
RUNS_PAGE_MAX = 200
SAMPLES_PAGE_MAX = 20_000
# The largest page of the other lists that page by limit and offset: trends' events (GET /api/trends/events) and
# imported reference results (GET /api/reference/imports).
LIST_PAGE_MAX = 200

# A block or buffer size in bytes (a `bigint` column): a petabyte, far above any real one.
MAX_BYTES = 2**50

# A run's attempt counter is an `integer` column too.
MAX_ATTEMPT = MAX_ID

# A sample's per-attempt sequence number. Kernels emit about one sample per second and a run is capped at
# Settings.max_job_duration_s (hours), so ten million is generous; 10^12 is refused.
MAX_SEQ = 10_000_000

# A host's inventory (sent at registration and with heartbeats, served on every GET /api/hosts), as compact
# JSON. A real one is a few KiB (this machine's: 2.3 KiB).
MAX_INVENTORY_BYTES = 256 * 1024

# Request bodies, in bytes. Checked before the body is read (Content-Length) and while it is read (chunked):
# larger ones get 413 (app.core.body). A runner's finish carries every repeat's result and its reference tools'
# metrics; a reference upload is a tool's whole text output (app.reference.router.MAX_UPLOAD).
MAX_BODY_BYTES = 1024 * 1024
BODY_LIMITS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"^/api/runner/runs/[^/]+/finish$"), 64 * 1024 * 1024),
    (re.compile(r"^/api/runner/runs/[^/]+/samples$"), 16 * 1024 * 1024),
    (re.compile(r"^/api/reference/parse$"), 8 * 1024 * 1024 + 64 * 1024),
)


# A request's headers must be complete within this long of the connection's opening (or of the next request's first
# byte on a kept-alive connection), else the connection is closed (app.core.server): a connection that sends part
# of its headers and then nothing holds no socket of the API for longer.
HEADER_DEADLINE_S = 10.0

# Reading a body (app.core.body, before the request takes an admission slot): it must start arriving and keep
# arriving. A body may take BODY_GRACE_S plus one second per BODY_MIN_RATE bytes received: each next piece must come
# before t0 + BODY_GRACE_S + received / BODY_MIN_RATE, else 408 and the connection is closed. A client that sends
# headers and then nothing (issue 27: a dozen such took every slot) is cut off after BODY_GRACE_S; a runner's
# largest finish (64 MiB) may take 17 minutes at the minimum rate (a 512-kbit/s link).
BODY_GRACE_S = 10.0
BODY_MIN_RATE = 64 * 1024  # bytes per second
# Bodies being read at once from one client address (the address uvicorn reports: behind a trusted proxy, the one
# it forwards). One more is refused with 429 before a byte of it is read. A runner's calls whose credential was
# checked before their body (app.runner_api.gate) do not count and are never refused by it.
BODIES_PER_ADDRESS = 32


def body_limit(path: str) -> int:
    for pattern, limit in BODY_LIMITS:
        if pattern.match(path):
            return limit
    return MAX_BODY_BYTES


def _inventory_size(value: dict[str, Any]) -> dict[str, Any]:
    size = len(json.dumps(value, separators=(",", ":"), default=str))
    if size > MAX_INVENTORY_BYTES:
        raise ValueError(f"inventory is {size} bytes as JSON; the limit is {MAX_INVENTORY_BYTES}")
    return value


Inventory = Annotated[dict[str, Any], AfterValidator(_inventory_size)]


def human_duration(seconds: float) -> str:
    if seconds >= 2 * 86400 * 365:
        return f"{seconds / (86400 * 365.25):.1f} years"
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"
