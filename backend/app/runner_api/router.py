import asyncio
import time
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from app.core import broker
from app.core.db import get_sessionmaker
from app.core.deps import RunnerDep, SessionDep
from app.hosts import service as hosts
from app.hosts.service import authenticate_runner
from app.runner_api import service
from app.worker.tasks import ring
from app.runner_api.schemas import (
    Assignment,
    AttemptBody,
    Heartbeat,
    HeartbeatAck,
    LeaseAck,
    Listening,
    RunFinish,
    RunnerRegister,
    RunnerRegistered,
    RunStart,
    SamplesAck,
    SamplesIn,
)

router = APIRouter(prefix="/api", tags=["runner"])


@router.post("/runners/register", response_model=RunnerRegistered, status_code=201)
def register(body: RunnerRegister, session: SessionDep) -> RunnerRegistered:
    host, token = hosts.register_runner(
        session, body.registration_token, body.name, body.hostname, body.version, body.inventory, body.labels
    )
    return RunnerRegistered(host_id=host.id, runner_token=token)


@router.post("/runner/heartbeat", response_model=HeartbeatAck)
def heartbeat(body: Heartbeat, runner: RunnerDep, session: SessionDep) -> HeartbeatAck:
    service.touch(session, runner, body.inventory)
    return HeartbeatAck(server_time=time.time())


def _runner_id(token: str | None) -> int:
    with get_sessionmaker()() as session:
        return authenticate_runner(session, token).id


def _claim_once(token: str | None, address: str | None) -> Assignment | None:
    with get_sessionmaker()() as session:
        host = authenticate_runner(session, token)
        hosts.note_address(session, host, address)
        service.touch(session, host)
        return service.claim(session, host)


@router.get("/runner/work", response_model=Assignment, responses={204: {"description": "no work"}})
async def work(
    request: Request,
    wait_s: Annotated[float, Query(ge=0, le=30)] = 20,
    authorization: Annotated[str | None, Header()] = None,
) -> Assignment | Response:
    """Long poll. Woken by the dispatch doorbell on Redis; re-checks PostgreSQL every 2 s regardless."""
    token = authorization[7:].strip() if authorization and authorization.lower().startswith("bearer ") else None
    host_id = await run_in_threadpool(_runner_id, token)  # 401 before holding anything open
    deadline = time.monotonic() + wait_s
    pubsub = broker.get_async_redis().pubsub()
    try:
        try:
            await pubsub.subscribe(broker.host_work_channel(host_id))
        except Exception:  # noqa: BLE001 - no Redis: fall back to polling PostgreSQL
            pubsub = None
        while True:
            assignment = await run_in_threadpool(_claim_once, token, request.client.host if request.client else None)
            if assignment is not None:
                return assignment
            left = deadline - time.monotonic()
            if left <= 0:
                return Response(status_code=204)
            if pubsub is None:
                await asyncio.sleep(min(2.0, left))
            else:
                try:
                    await pubsub.get_message(ignore_subscribe_messages=True, timeout=min(2.0, left))
                except Exception:  # noqa: BLE001
                    await asyncio.sleep(min(2.0, left))
    finally:
        if pubsub is not None:
            try:
                await pubsub.aclose()
            except Exception:  # noqa: BLE001, S110
                pass


@router.post("/runner/runs/{run_id}/start")
def start(run_id: int, body: RunStart, runner: RunnerDep, session: SessionDep) -> dict[str, bool]:
    service.start(session, runner, run_id, body.attempt, body.kernel_info)
    return {"ok": True}


@router.post("/runner/runs/{run_id}/lease", response_model=LeaseAck)
def lease(run_id: int, body: AttemptBody, runner: RunnerDep, session: SessionDep) -> LeaseAck:
    return LeaseAck(lease_expires_at=service.renew_lease(session, runner, run_id, body.attempt))


@router.post("/runner/runs/{run_id}/listening")
def listening(run_id: int, body: Listening, runner: RunnerDep, session: SessionDep) -> dict[str, bool]:
    """A serve run's kernel bound its port: store it, then ring the doorbell of the driving host."""
    ports = body.reference_ports.model_dump(exclude_none=True) if body.reference_ports is not None else None
    drive_host = service.listening(session, runner, run_id, body.attempt, body.port, ports)
    if drive_host is not None:
        ring(drive_host)
    return {"ok": True}


@router.post("/runner/runs/{run_id}/samples", response_model=SamplesAck)
def samples(run_id: int, body: SamplesIn, runner: RunnerDep, session: SessionDep) -> SamplesAck:
    inserted, max_seq = service.ingest(session, runner, run_id, body.attempt, body.samples)
    return SamplesAck(inserted=inserted, max_seq=max_seq)


@router.post("/runner/runs/{run_id}/finish")
def finish(run_id: int, body: RunFinish, runner: RunnerDep, session: SessionDep) -> dict[str, bool]:
    service.finish(session, runner, run_id, body)
    ring(runner.id)
    return {"ok": True}
