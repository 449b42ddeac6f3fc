"""The runner's credential, checked before its request's body is read (issue 27, items 1 and 12).

Pure ASGI, outside app.core.body and app.core.admission (app.main): every path under /api/runner/ takes a runner
credential (`Authorization: Bearer hbrun_…`; docs/security.md). A call without one, with a person's token, or with
one no host holds is answered 401 here, before a byte of its body is read or parsed: a body is never judged
(422) for a caller who may not call the route at all, and nobody without a runner's credential gets a runner
route to read a body for them. A call whose credential is known is marked (scope[VOUCHED]): its body is read
without counting towards the per-address bound (app.core.bounds.BODIES_PER_ADDRESS), so strangers holding bodies
from a runner's address (the same NAT) cannot stop its lease renewals.

The check is one indexed statement (app.runner_api.fast.host_of), remembered for KNOWN_S per process: a fleet's
renewals cost a dictionary look-up. A credential not remembered is looked up inside a slot of the runners' class
(app.core.admission, "runner"): a flood of made-up credentials waits for those few slots, and never reaches the
connections or the slots a lease renewal (class "run") needs; a look-up that finds no slot passes the call on
unmarked (below). A credential remembered here but revoked meanwhile is still refused by the
route itself, which checks it in its own statement; what is remembered decides only whether the body is read.
When PostgreSQL cannot answer, the call is passed on unmarked: the route then answers as it does in an outage
(503 with Retry-After), and the body is read as anyone's is. Every answer to a call about a run that is the
server's own failure (5xx, 429) is noted (app.jobs.refusals): no lease runs out for a renewal the server refused.

Registration (/api/runners/register) carries its single-use token in the body and is not gated here."""
import logging
import time

import psycopg
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.admission import slot
from app.core.body import VOUCHED, answer
from app.core.db import runner_session
from app.core.errors import HostbenchError, Unauthorized
from app.core.security import hash_token
from app.hosts.service import RUNNER_TOKEN, authenticate_runner
from app.jobs import refusals
from app.runner_api import fast

log = logging.getLogger("hostbench.runner_gate")
PREFIX = "/api/runner/"
KNOWN_S = 300.0  # how long a checked credential is remembered (per process)
KNOWN_MAX = 20_000  # remembered credentials at most; forgotten all at once beyond (a fleet has one each)
_known: dict[str, tuple[int, float]] = {}  # credential's digest -> (host id, remembered until, monotonic)


def _bearer(scope: Scope) -> str | None:
    for k, v in scope["headers"]:
        if k == b"authorization":
            value = v.decode("latin-1")
            return value[7:].strip() if value[:7].lower() == "bearer " else None
    return None


def _full_check(token: str) -> int:
    with runner_session() as session:
        return authenticate_runner(session, token).id  # a rotated credential's first use completes the rotation


async def host_of(token: str) -> int:
    """The host holding this runner credential; raises Unauthorized when none does (or a server error)."""
    digest = hash_token(token)
    now = time.monotonic()
    hit = _known.get(digest)
    if hit is not None and hit[1] > now:
        return hit[0]
    async with slot("runner"):  # raises Busy or DatabaseHung (503): the call is then passed on unmarked
        host_id = await fast.host_of(token)
        if host_id is None:
            host_id = await run_in_threadpool(_full_check, token)
    if len(_known) >= KNOWN_MAX:
        _known.clear()
    _known[digest] = (host_id, now + KNOWN_S)
    return host_id


def forget() -> None:
    """Forget every remembered credential (tests)."""
    _known.clear()


def _routed(scope: Scope, routes: list[BaseRoute]) -> bool:
    """Whether a runner route takes this method at this path: a method no route takes (TRACE, or GET where only
    POST is) is passed on to the router, which answers 405 (or 404) without reading a body."""
    return any(route.matches(scope)[0] is Match.FULL for route in routes)


class RunnerCredentials:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or not scope["path"].startswith(PREFIX)
                or not _routed(scope, scope["app"].router.routes)):
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        if not token:
            await answer(send, 401, "runner credential missing")
            return
        if not token.startswith(f"{RUNNER_TOKEN}_"):
            await answer(send, 401, "this route takes a runner's credential (hbrun_…), not a person's")
            return
        try:
            scope[VOUCHED] = await host_of(token)
        except Unauthorized as exc:
            await answer(send, 401, exc.detail)
            return
        except (HostbenchError, psycopg.Error, SQLAlchemyError, OSError) as exc:
            # the database away or busy: the route answers for itself (503), the body read as anyone's
            log.debug("runner credential not checked before the body: %s", exc)
        path = scope["path"]

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start" and refusals.counts(path, message["status"]):
                refusals.note()  # the server could not take a runner's call: no lease runs out for it
            await send(message)

        await self.app(scope, receive, noting)
