import asyncio
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.core import broker
from app.core.admission import slot
from app.core.auth import REGISTRATION, RUNNER
from app.core.body import ParsedJSONRoute
from app.core.bounds import Id
from app.core.config import get_settings
from app.core.db import get_runner_session, runner_session
from app.core.errors import Unauthorized
from app.hosts import service as hosts
from app.hosts.models import Host
from app.hosts.service import authenticate_runner, note_address
from app.jobs.doorbell import ring
from app.live.hub import hub
from app.runner_api import fast, service
from app.runner_api.schemas import (
    Assignment,
    AttemptBody,
    Heartbeat,
    HeartbeatAck,
    LeaseAck,
    LeaseIn,
    Listening,
    RunFinish,
    RunnerCredential,
    RunnerRegister,
    RunnerRegistered,
    RunStart,
    SamplesAck,
    SamplesIn,
)

router = APIRouter(prefix="/api", tags=["runner"], route_class=ParsedJSONRoute)  # bodies parsed once (app.core.body)
# Runner control calls use their own connection pool (app.core.db) and admission slots (app.core.admission):
# a dashboard stampede cannot take what a lease renewal needs.
RunnerSessionDep = Annotated[Session, Depends(get_runner_session)]
# The long poll re-reads PostgreSQL when its doorbell rings, and otherwise only this often (a safety net for a
# lost doorbell); each new poll reads it once at its start.
POLL_SAFETY_S = 15.0
POLL_NO_REDIS_S = 2.0


def _bearer(authorization: str | None) -> str | None:
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return None


def current_runner(request: Request, session: RunnerSessionDep,
                   authorization: Annotated[str | None, Header()] = None) -> Host:
    host = authenticate_runner(session, _bearer(authorization))
    note_address(session, host, request.client.host if request.client else None)
    return host


current_runner.__hostbench_access__ = "runner"  # type: ignore[attr-defined]  # read by app.core.routes.route_access
RunnerDep = Annotated[Host, Depends(current_runner)]


async def runner_token(authorization: Annotated[str | None, Header()] = None) -> str:
    """The runner's credential as sent, for the calls that check it in their own statement (app.runner_api.fast):
    a call without one is refused here, before its body is looked at."""
    token = _bearer(authorization)
    if not token:
        raise Unauthorized("runner credential missing")
    return token


runner_token.__hostbench_access__ = "runner"  # type: ignore[attr-defined]
RunnerTokenDep = Annotated[str, Depends(runner_token)]



@router.post("/runners/register", response_model=RunnerRegistered, status_code=201, dependencies=[REGISTRATION])
def register(body: RunnerRegister, request: Request, session: RunnerSessionDep) -> RunnerRegistered:
    host, token = hosts.register_runner(
        session, body.registration_token, body.name, body.hostname, body.version, body.inventory, body.labels,
        request.client.host if request.client else None, body.machine_id,
    )
    return RunnerRegistered(host_id=host.id, runner_token=token)


def _address(request: Request) -> str | None:
    return request.client.host if request.client else None


def _full_heartbeat(request: Request, authorization: str | None, body: Heartbeat) -> HeartbeatAck:
    with runner_session() as session:
        runner = current_runner(request, session, authorization)
        service.touch(session, runner, body.inventory, body.version)
        return HeartbeatAck(server_time=time.time(), rotate_credential=runner.rotate_requested_at is not None,
                            heartbeat_s=_next_heartbeat_s(body))


@router.post("/runner/heartbeat", response_model=HeartbeatAck, dependencies=[RUNNER])
async def heartbeat(body: Heartbeat, request: Request,
                    authorization: Annotated[str | None, Header()] = None) -> HeartbeatAck:
    # The common heartbeat is one statement on the event loop (app.runner_api.fast); one with an inventory, a
    # rotated credential's first use or an unknown one takes the full path.
    token = _bearer(authorization)
    if token and body.inventory is None:
        rotate = await fast.beat(token, body.version, _address(request))
        if rotate is not None:
            return HeartbeatAck(server_time=time.time(), rotate_credential=rotate, heartbeat_s=_next_heartbeat_s(body))
    return await run_in_threadpool(_full_heartbeat, request, authorization, body)


def _next_heartbeat_s(body: Heartbeat) -> float:
    s = get_settings()
    return s.runner_heartbeat_busy_s if body.run is not None else s.runner_heartbeat_idle_s


@router.post("/runner/credential/rotate", response_model=RunnerCredential)
def rotate_credential(runner: RunnerDep, session: RunnerSessionDep) -> RunnerCredential:
    """A new credential; the one this call used stays valid until the new one is first used."""
    return RunnerCredential(runner_token=hosts.rotate_credential(session, runner))


def _runner_id(token: str | None) -> int:
    with runner_session() as session:
        return authenticate_runner(session, token).id


def _claim(host_id: int) -> Assignment | None:
    with runner_session() as session:
        host = session.get(Host, host_id)  # seen and its address noted by the poll's step just now
        if host is None or host.revoked_at is not None or host.deleted_at is not None:
            raise Unauthorized("runner credential unknown or revoked")
        return service.claim(session, host)


async def claim_once(host_id: int, address: str | None) -> Assignment | None:
    """One pass of the long poll. The credential was checked when the poll began; a rotation completed since
    must not fail this poll, a revocation must: so the host is re-read by id, not by the token."""
    if not await fast.poll_step(host_id, address):
        return None
    return await run_in_threadpool(_claim, host_id)


@router.get("/runner/work", response_model=Assignment, responses={204: {"description": "no work"}},
            dependencies=[RUNNER])
async def work(
    request: Request,
    wait_s: Annotated[float, Query(ge=0, le=30)] = 20,
    authorization: Annotated[str | None, Header()] = None,
) -> Assignment | Response:
    """Long poll. Reads PostgreSQL once, then waits on the host's doorbell (Redis, through this process's one
    subscription) without touching PostgreSQL until it rings, with a safety re-read every POLL_SAFETY_S
    (every POLL_NO_REDIS_S while Redis is down)."""
    address = request.client.host if request.client else None
    async with slot("poll"):
        token = _bearer(authorization)
        found = await fast.host_of(token) if token else None
        host_id: int = found if found is not None else await run_in_threadpool(_runner_id, token)
    deadline = time.monotonic() + wait_s
    h = hub()
    sub = h.subscribe(broker.host_work_channel(host_id))
    # The runner's side of the connection: it closing ends the poll at once (not at its deadline), so a killed or
    # restarted runner leaves no poll holding a subscription here, and an API process shuts down without waiting
    # out its graceful timeout on polls nobody reads.
    gone = asyncio.ensure_future(_disconnect(request))
    try:
        live = await h.ready(1.0)  # subscribed before the first read: a doorbell rung after it is not missed
        next_safety = time.monotonic() + (POLL_SAFETY_S if live else POLL_NO_REDIS_S)
        while True:
            # A runner killed while its poll was open leaves the poll running here: it must claim nothing, or the
            # run waits out a lease on a dead host (chaos idle-runner-kill; docs/reliability.md, rule 4).
            if gone.done():
                return Response(status_code=204)
            async with slot("poll"):
                assignment = await claim_once(host_id, address)
            if assignment is not None:
                return assignment
            while True:
                now = time.monotonic()
                if now >= deadline or gone.done():
                    return Response(status_code=204)
                if not h.up.is_set():
                    await asyncio.wait({gone}, timeout=min(POLL_NO_REDIS_S, deadline - now))
                    break
                get = asyncio.ensure_future(sub.get(min(deadline, next_safety) - now))
                await asyncio.wait({get, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not get.done():
                    get.cancel()
                    return Response(status_code=204)
                rang = get.result()
                if rang is not None or sub.lost or time.monotonic() >= next_safety:
                    sub.lost = False
                    next_safety = time.monotonic() + POLL_SAFETY_S
                    break
    finally:
        gone.cancel()
        h.unsubscribe(sub)


async def _disconnect(request: Request) -> None:
    """Returns when the client has closed the connection (a GET has no body: the next ASGI message is the
    disconnect)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


@router.post("/runner/runs/{run_id}/start")
def start(run_id: Id, body: RunStart, runner: RunnerDep, session: RunnerSessionDep) -> dict[str, bool]:
    service.start(session, runner, run_id, body.attempt, body.kernel_info)
    return {"ok": True}


@router.post("/runner/runs/{run_id}/lease", response_model=LeaseAck)
async def lease(run_id: Id, body: LeaseIn, request: Request, token: RunnerTokenDep) -> LeaseAck:
    # one statement on the event loop (app.runner_api.fast): a renewal never waits for a worker thread
    phase = body.phase.model_dump(mode="json") if body.phase is not None else None
    return LeaseAck(lease_expires_at=await fast.renew_lease(token, _address(request), run_id, body.attempt, phase))


@router.post("/runner/runs/{run_id}/listening")
def listening(run_id: Id, body: Listening, runner: RunnerDep, session: RunnerSessionDep) -> dict[str, bool]:
    """A serve run's kernel bound its port: store it, then ring the doorbell of the driving host(s)."""
    ports = body.reference_ports.model_dump(exclude_none=True) if body.reference_ports is not None else None
    for drive_host in service.listening(session, runner, run_id, body.attempt, body.port, ports):
        ring(drive_host)
    return {"ok": True}


@router.post("/runner/runs/{run_id}/samples", response_model=SamplesAck)
async def samples(run_id: Id, body: SamplesIn, request: Request, token: RunnerTokenDep) -> SamplesAck:
    """One batch of samples, stored at once or not at all. A sample resent with the same seq and the same fields
    is acknowledged without a second row; one with different fields is refused: listed in `conflicts`, logged,
    never stored over the first."""
    # one statement on the event loop (app.runner_api.fast): the run checked and locked, one multi-row insert
    inserted, max_seq, conflicts = await fast.ingest(token, _address(request), run_id, body.attempt, body.samples)
    return SamplesAck(inserted=inserted, max_seq=max_seq, conflicts=conflicts)


@router.post("/runner/runs/{run_id}/finish")
def finish(run_id: Id, body: RunFinish, runner: RunnerDep, session: RunnerSessionDep) -> dict[str, bool]:
    service.finish(session, runner, run_id, body)
    ring(runner.id)
    return {"ok": True}


@router.post("/runner/runs/{run_id}/closed")
def closed(run_id: Id, body: AttemptBody, runner: RunnerDep, session: RunnerSessionDep) -> dict[str, bool]:
    """The attempt will send no more samples: its runner sends no finish (the server ended the run) and has
    uploaded what it spooled. A live stream sends `end` then (app.live.router). Idempotent; 409 for a stale attempt."""
    service.closed(session, runner, run_id, body.attempt)
    return {"ok": True}
