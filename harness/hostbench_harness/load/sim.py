"""Simulated runners: register, long-poll, heartbeat, and for a run start, renew the lease, spool samples and upload
them in batches with retries, as hostbench_runner does."""
import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hostbench_common.runstatus import RunStatus

from hostbench_harness.load.base import (
    BATCH_MAX,
    HEARTBEAT_S,
    LEASE_RENEW_S,
    POLL_WAIT_S,
    REQUEST_TIMEOUT_S,
    VERSION,
    Client,
    Conn,
    HttpFailure,
    retry_after,
)

if TYPE_CHECKING:
    from hostbench_harness.load import Load

# --- simulated runners ------------------------------------------------------------------------------------------

INVENTORY = {
    "cpu": {"model": "Simulated CPU @ 3.0GHz", "vendor": "sim", "sockets": 1, "cores_per_socket": 2,
            "threads_per_core": 1, "base_ghz": 3.0, "flags": ["avx2", "fma"], "isa": "x86_64"},
    "memory": {"total_bytes": 8 * 2**30},
    "os": {"system": "Linux", "release": "6.1", "machine": "x86_64"},
    "kernel": {"built": True},
}


@dataclass
class RunState:
    run_id: int
    attempt: int
    seq: int = -1
    spool: list[dict] = field(default_factory=list)  # generated, not yet acknowledged, in seq order
    acked: set[int] = field(default_factory=set)
    inserted: int = 0
    started: float = 0.0
    lost: bool = False
    lease_task: "asyncio.Task[None] | None" = None


class SimRunner:
    def __init__(self, load: "Load", index: int):
        self.load = load
        self.index = index
        self.name = f"load-{index:05d}"
        self.token = ""
        self.host_id = 0
        self.run: RunState | None = None
        self.client = Client(load.control_host, load.control_port)  # heartbeat, lease, uploads (its own pool)
        self.poll_conn = Conn(load.control_host, load.control_port)  # the long poll's connection
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task] = []

    async def register(self, admin_token: str) -> None:
        c = self.client
        for _ in range(20):
            st, hdrs, body = await c.request("POST", "/api/hosts/registration-tokens", token=admin_token,
                                             body={"ttl_s": 3600})
            if st == 201:
                reg = json.loads(body)["token"]
                st, hdrs, body = await c.request("POST", "/api/runners/register", body={
                    "registration_token": reg, "name": self.name, "hostname": f"{self.name}.load",
                    "version": VERSION, "inventory": INVENTORY, "labels": {"fleet": "load"}})
                if st == 201:
                    answer = json.loads(body)
                    self.token, self.host_id = answer["runner_token"], answer["host_id"]
                    return
            await asyncio.sleep(retry_after(hdrs, 0.5))
        raise RuntimeError(f"could not register {self.name}: HTTP {st} {body[:200]!r}")

    def start(self) -> None:
        self.tasks = [asyncio.create_task(self.heartbeat_loop()), asyncio.create_task(self.poll_loop())]

    async def call(self, kind: str, method: str, path: str, body: Any = None,
                   timeout: float = REQUEST_TIMEOUT_S) -> tuple[int | str, dict[str, str], bytes, float]:
        t0 = time.monotonic()
        try:
            st, hdrs, content = await self.client.request(method, path, token=self.token, body=body, timeout=timeout)
        except HttpFailure as exc:
            took = time.monotonic() - t0
            self.load.fig.note(kind, "timeout" if "Timeout" in str(exc) else "no answer", took)
            return "failure", {}, b"", took
        took = time.monotonic() - t0
        self.load.fig.note(kind, st, took)
        return st, hdrs, content, took

    async def heartbeat_loop(self) -> None:
        await asyncio.sleep(random.uniform(0, HEARTBEAT_S))  # noqa: S311
        while not self.stop.is_set():
            run = self.run
            body = {"run": {"run_id": run.run_id, "attempt": run.attempt} if run else None, "version": VERSION}
            st, _, content, took = await self.call("heartbeat", "POST", "/api/runner/heartbeat", body)
            wait = HEARTBEAT_S
            if st == 200:
                if self.load.fig.measuring:
                    self.load.fig.heartbeat.append(took)
                wait = float(json.loads(content).get("heartbeat_s") or HEARTBEAT_S)  # as the runner honours it
            try:
                await asyncio.wait_for(self.stop.wait(), wait)
            except TimeoutError:
                pass

    async def poll_loop(self) -> None:
        backoff = 0.5
        while not self.stop.is_set():
            if self.run is not None:
                await asyncio.sleep(0.5)
                continue
            try:
                st, hdrs, body = await self.poll_conn.request(
                    "GET", f"/api/runner/work?wait_s={POLL_WAIT_S}", {"Authorization": f"Bearer {self.token}"},
                    None, POLL_WAIT_S + REQUEST_TIMEOUT_S)
            except HttpFailure as exc:
                if self.stop.is_set():
                    break  # the poll in flight was cut by the stop itself, not by the server
                self.load.fig.note("work-poll", "timeout" if "Timeout" in str(exc) else "no answer")
                await asyncio.sleep(backoff)
                backoff = min(10.0, backoff * 2)
                continue
            self.load.fig.note("work-poll", st)
            if st == 200:
                backoff = 0.5
                a = json.loads(body)
                await self.execute(a)
            elif st == 204:
                backoff = 0.5
            else:
                await asyncio.sleep(retry_after(hdrs, backoff))
                backoff = min(10.0, backoff * 2)

    async def execute(self, a: dict) -> None:
        run = RunState(a["run_id"], a["attempt"], started=time.time())
        self.run = run
        self.load.runs[run.run_id] = run
        kinfo = {"clock_ghz": 3.0, "threads": 1, "build": "sim"}
        while not self.stop.is_set():
            st, hdrs, _, _ = await self.call("start", "POST", f"/api/runner/runs/{run.run_id}/start",
                                             {"attempt": run.attempt, "kernel_info": kinfo})
            if st == 200:
                break
            if st == 409 or (isinstance(st, int) and 400 <= st < 500 and st != 429):
                run.lost = True
                self.load.lost_runs.append((run.run_id, f"start {st}"))
                self.run = None
                return
            await asyncio.sleep(retry_after(hdrs, 1.0))
        self.load.running.add(self)
        run.lease_task = asyncio.create_task(self.lease_loop(run))
        self.tasks += [run.lease_task, asyncio.create_task(self.sample_loop(run)),
                       asyncio.create_task(self.upload_loop(run))]

    async def lease_loop(self, run: RunState) -> None:
        await asyncio.sleep(random.uniform(0, LEASE_RENEW_S))  # noqa: S311
        while not self.stop.is_set() and not run.lost:
            st, _, body, took = await self.call("lease", "POST", f"/api/runner/runs/{run.run_id}/lease",
                                                {"attempt": run.attempt}, timeout=5.0)
            if st == 200 and self.load.fig.measuring:
                self.load.fig.lease.append(took)
            if st == 409:
                run.lost = True
                self.load.lost_runs.append((run.run_id, body[:200].decode(errors="replace")))
            try:
                await asyncio.wait_for(self.stop.wait(), LEASE_RENEW_S)
            except TimeoutError:
                pass

    async def sample_loop(self, run: RunState) -> None:
        """The kernel: one cpu_trace sample every 1/rate s, with the fields the real kernel writes."""
        period = 1.0 / self.load.rate
        next_at = time.monotonic()
        while not self.load.stop_samples.is_set() and not run.lost:
            # looked up per sample: the streams (and so the watched runs) are chosen after the runs start
            watched = run.run_id in self.load.watched
            now = time.monotonic()
            due = int((now - next_at) / period) + 1  # catch up if the event loop was late
            for _ in range(due):
                run.seq += 1
                wall = time.time()
                run.spool.append({"seq": run.seq, "t": round(wall - run.started, 6), "interval_s": period,
                                  "threads": 1, "repeat": 0, "warmup": run.seq < 3,
                                  "value": round(random.gauss(48.0, 0.4), 4), "unit": "GFLOP/s",  # noqa: S311
                                  "op": "fp64"})
                if watched:
                    self.load.measured[(run.run_id, run.seq)] = wall
            next_at += due * period
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    async def upload_loop(self, run: RunState) -> None:
        """The uploader: every --upload-interval, the spool's oldest samples (at most 1,000) in one batch; kept
        until acknowledged (spool-and-retry)."""
        delay = 0.5
        while not run.lost:
            if not run.spool:
                if self.load.stop_samples.is_set():
                    return
                await asyncio.sleep(self.load.upload_interval)
                continue
            batch = run.spool[:BATCH_MAX]
            st, hdrs, body, took = await self.call("samples", "POST", f"/api/runner/runs/{run.run_id}/samples",
                                                   {"attempt": run.attempt, "samples": batch})
            if st == 200:
                ack = json.loads(body)
                del run.spool[:len(batch)]
                run.acked.update(s["seq"] for s in batch)
                run.inserted += ack["inserted"]
                if self.load.fig.measuring:
                    self.load.fig.batch_ack.append(took)
                    self.load.fig.samples_acked += ack["inserted"]
                delay = 0.5
                if len(run.spool) < BATCH_MAX:
                    await asyncio.sleep(self.load.upload_interval)
            elif st == 409:
                run.lost = True
                self.load.lost_runs.append((run.run_id, body[:200].decode(errors="replace")))
            elif isinstance(st, int) and 400 <= st < 500 and st != 429:
                self.load.rejected.append((run.run_id, st, body[:200].decode(errors="replace")))
                del run.spool[:len(batch)]  # the runner drops a rejected batch and marks the run
            else:
                await asyncio.sleep(retry_after(hdrs, delay * random.uniform(0.5, 1.0)))  # noqa: S311
                delay = min(10.0, delay * 2)

    async def finish(self) -> None:
        run = self.run
        if run is None or run.lost:
            return
        if run.lease_task is not None:  # as the runner does: no renewal once the run is being finished
            run.lease_task.cancel()
            await asyncio.gather(run.lease_task, return_exceptions=True)
        for _ in range(10):
            st, hdrs, _, _ = await self.call("finish", "POST", f"/api/runner/runs/{run.run_id}/finish",
                                             {"attempt": run.attempt, "status": RunStatus.failed,
                                              "reason": "load test ended"})
            if st == 200 or st == 409:
                return
            await asyncio.sleep(retry_after(hdrs, 1.0))

    async def shutdown(self) -> None:
        self.stop.set()
        self.poll_conn.close()
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.client.close()


