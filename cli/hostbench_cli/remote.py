"""The commands that talk to a hostbench server over its API with a personal API token: `runs`, `wait`, `export`
and `parse ... --import` (and `run SUITE --wait` later, through follow_run).

Where and as whom, read once here (Server.from_args): `--server URL` or HOSTBENCH_SERVER_URL, else the public URL
of the `./hostbench up` running from this checkout (said on stderr); `--token` or HOSTBENCH_TOKEN, a personal API
token (`./hostbench api-token NAME` prints one), sent as `Authorization: Bearer`. Every failure to talk to the
server (unreachable, 401, 403, 404, 422, ...) is one `error: ...` line on stderr and exit status 2; never a
traceback."""
import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import httpx
from app.core.bounds import RUNS_PAGE_MAX, SAMPLES_PAGE_MAX
from hostbench_common.runstatus import ON_HOST, RunStatus
from hostbench_stack import admin, settings

from hostbench_cli.safeout import escape, raw

RUNS_MAX = 10_000  # `runs --limit`: at most this many, paged RUNS_PAGE_MAX at a time
BUSY_RETRIES = 5


class RemoteError(Exception):
    """Talking to the server failed: one line for the person; exit status 2."""


class Unreachable(RemoteError):
    """No answer at all (refused, reset, timed out): a server restarting looks like this for a few seconds."""


# How long `run --wait` keeps asking a server that does not answer before it gives up (a restart of the API takes
# seconds; the suite goes on on the server meanwhile).
FOLLOW_OUTAGE_S = 120.0


def add_server_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--server", default=None, metavar="URL",
                   help="the hostbench server (default: $HOSTBENCH_SERVER_URL, else the running ./hostbench up)")
    p.add_argument("--token", default=None,
                   help="a personal API token (default: $HOSTBENCH_TOKEN; `./hostbench api-token NAME` prints one)")


def _detail(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        return r.text.strip()[:300] or r.reason_phrase
    d = body.get("detail") if isinstance(body, dict) else None
    if isinstance(d, list):  # FastAPI's validation errors
        return "; ".join(f"{'.'.join(str(x) for x in e.get('loc', [])[1:])}: {e.get('msg')}" for e in d
                         if isinstance(e, dict))
    return str(d) if d is not None else r.text.strip()[:300]


@dataclass
class Server:
    url: str
    token: str
    client: httpx.Client = field(repr=False)

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, say: IO[str] = sys.stderr) -> "Server":
        url = getattr(args, "server", None) or settings.load().server_url or ""
        if not url:
            up = admin.live_up()
            if up is None or not (up.get("public_url") or up.get("api_url")):
                raise RemoteError("no server: pass --server URL or set HOSTBENCH_SERVER_URL (or start ./hostbench up "
                                  "here)")
            url = str(up.get("public_url") or up.get("api_url"))
            print(f"using the local ./hostbench up at {url} (--server or HOSTBENCH_SERVER_URL to choose another)",
                  file=say)
        url = url.rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise RemoteError(f"--server {url!r}: give a URL that starts with http:// or https://")
        token = getattr(args, "token", None) or settings.load().token or ""
        if not token:
            raise RemoteError("no API token: pass --token or set HOSTBENCH_TOKEN (`./hostbench api-token NAME` prints "
                              "one)")
        client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token.strip()}",
                                                     "User-Agent": "hostbench-cli"},
                              timeout=httpx.Timeout(30.0, connect=10.0))
        return cls(url, token, client)

    def close(self) -> None:
        self.client.close()

    def check(self, r: httpx.Response, what: str) -> httpx.Response:
        if r.status_code < 400:
            return r
        detail = _detail(r)
        if r.status_code == 401:
            raise RemoteError(f"{self.url} refused the API token (401): {detail}")
        if r.status_code == 403:
            raise RemoteError(f"not allowed (403): {detail}")
        raise RemoteError(f"{what}: {r.status_code} {detail}")

    def request(self, method: str, path: str, what: str, **kw: Any) -> httpx.Response:
        """One call; 429 and 503 (the server busy, with Retry-After) are retried a few times."""
        for attempt in range(BUSY_RETRIES + 1):
            try:
                r = self.client.request(method, path, **kw)
            except httpx.TimeoutException as exc:
                raise Unreachable(f"{self.url} did not answer in time ({type(exc).__name__})") from None
            except httpx.HTTPError as exc:
                raise Unreachable(f"cannot reach {self.url}: {exc}") from None
            if r.status_code in (429, 503) and attempt < BUSY_RETRIES:
                time.sleep(_retry_after(r))
                continue
            return self.check(r, what)
        raise AssertionError("unreachable")

    def get_json(self, path: str, what: str, **params: Any) -> Any:
        r = self.request("GET", path, what, params={k: v for k, v in params.items() if v is not None})
        try:
            return r.json()
        except ValueError:
            raise RemoteError(f"{what}: {self.url} answered with something other than JSON (is it a hostbench "
                              "server?)") from None


def _retry_after(r: httpx.Response) -> float:
    try:
        return min(max(float(r.headers.get("retry-after", "1")), 0.2), 10.0)
    except ValueError:
        return 1.0


# ---- runs ----------------------------------------------------------------------------------------------------------

def resolve_host(server: Server, host: str) -> tuple[int, str]:
    """A host given by id or by name -> (id, name)."""
    hosts = server.get_json("/api/hosts", "listing hosts")["data"]
    if host.isdigit():
        for h in hosts:
            if h["id"] == int(host):
                return h["id"], h["name"]
        raise RemoteError(f"no host with id {host}")
    named = [h for h in hosts if h["name"] == host]
    if not named:
        names = ", ".join(sorted(h["name"] for h in hosts)[:20]) or "none"
        raise RemoteError(f"no host named {host!r} (hosts: {names})")
    if len(named) > 1:
        raise RemoteError(f"{len(named)} hosts are named {host!r}; give its id: "
                          + ", ".join(str(h["id"]) for h in named))
    return named[0]["id"], named[0]["name"]


def list_runs(server: Server, *, host_id: int | None = None, status: str | None = None,
              limit: int = 20, full: bool = False) -> tuple[list[dict], int, bool]:
    """The newest `limit` runs matching, paged through the API RUNS_PAGE_MAX at a time (keyset: before_id); how many
    match in all, and whether that is a lower bound (the server counts exactly up to a bound, then says "more than").
    full: each run's whole result (its rows), not only its headline and verdict."""
    out: list[dict] = []
    count, more = 0, False
    before: int | None = None
    while len(out) < limit:
        page = server.get_json("/api/runs", "listing runs", host_id=host_id, status=status,
                               limit=min(RUNS_PAGE_MAX, limit - len(out)), before_id=before,
                               detail="full" if full else None)
        count, more = page["count"], bool(page.get("count_more"))
        out.extend(page["data"])
        before = page.get("next_before_id")
        if not page["data"] or before is None:
            break
    return out[:limit], count, more


def fmt_value(v: float | None, unit: str = "") -> str:
    if v is None:
        return "—"
    a = abs(v)
    s = f"{v:.0f}" if a >= 1000 else f"{v:.1f}" if a >= 100 else f"{v:.2f}" if a >= 1 else f"{v:.3g}"
    return f"{s} {unit}".strip()


def headline(run: dict) -> str:
    """The figure that sums a run up (as the dashboard's History): the server's (result.headline: the best valid
    row, or why there is none); from a server without one, the trace mean, else the highest row mean."""
    if isinstance(run.get("headline"), dict) and run["headline"].get("text"):  # a list's run: the stored headline
        return str(run["headline"]["text"])
    r = run.get("result")
    if not r:
        return "—"
    if isinstance(r.get("headline"), dict) and r["headline"].get("text"):
        return str(r["headline"]["text"])
    if r.get("trace"):
        return f"mean {fmt_value(r['trace'].get('mean'), run.get('unit') or r.get('unit', ''))}"
    rows = r.get("rows") or []
    if not rows:
        return "—"
    best = max(rows, key=lambda row: row["mean"])
    return f"best {fmt_value(best['mean'], best['unit'])}" + ("" if all(row.get("valid", True) for row in rows)
                                                                  else " (invalid rows)")


def summary(params: dict) -> str:
    """op and threads (and block size) of a run's parameters: "fp64 t=1,2"."""
    parts = []
    op = params.get("op") or params.get("ops") or params.get("pattern")
    if op:
        parts.append(",".join(map(str, op)) if isinstance(op, list) else str(op))
    th = params.get("threads")
    if th is not None:
        parts.append("t=" + (",".join(map(str, th)) if isinstance(th, list) else str(th)))
    return " ".join(parts) or "—"


def runs_table(runs: list[dict]) -> str:
    head = ["ID", "HOST", "EXPERIMENT", "OP/THREADS", "STATUS", "VERDICT", "HEADLINE", "FINISHED"]
    rows = [[escape(c) for c in (  # escaped before the widths are measured: the columns stay aligned
        str(r["id"]), r["host_name"], r["experiment"], summary(r.get("params") or {}), r["status"],
        r.get("verdict") or (r.get("result") or {}).get("verdict") or "—", headline(r),
        (r.get("finished_at") or "—").replace("T", " ")[:19])] for r in runs]
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=False)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                     for line in [head, *rows])


def cmd_runs(server: Server, args: argparse.Namespace, out: IO[str]) -> int:
    host_id = resolve_host(server, args.host)[0] if args.host else None
    runs, count, more = list_runs(server, host_id=host_id, status=args.status, limit=args.limit, full=args.json)
    if args.json:
        json.dump({"count": count, "data": runs}, out, indent=1)
        out.write("\n")
        return 0
    if not runs:
        print("no runs match", file=sys.stderr)
        return 0
    print(runs_table(runs), file=out)
    if count > len(runs):
        print(f"({len(runs)} of {'more than ' if more else ''}{count:,}; --limit N for more)", file=sys.stderr)
    return 0


# ---- wait: a run's live stream ---------------------------------------------------------------------------------

def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str, str | None]]:
    """(event, data, id) of each Server-Sent Event in a stream of lines."""
    event, data, eid = "message", list[str](), None
    for line in lines:
        if line == "":
            if data:
                yield event, "\n".join(data), eid
            event, data, eid = "message", [], None
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
            elif name == "id":
                eid = value


@dataclass
class Progress:
    run_id: int
    out: IO[str]
    samples: int = 0
    value: float | None = None
    unit: str = ""
    status: str = "?"
    started: float | None = None
    finished: float | None = None
    expected_s: float = 0.0  # the usual time (typical_duration_s), else the cap
    cap_s: float = 0.0
    phase: str = ""  # the runner's phase in a few words ("hpcc 3/8: HPL N = 5,760, 2 processes")
    last_print: float = 0.0
    tty: bool = False

    def show(self, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last_print < (0.5 if self.tty else 5.0):
            return
        self.last_print = now
        elapsed = f"{max((self.finished or time.time()) - self.started, 0):.0f}" if self.started else "0"
        line = (f"run {self.run_id}: {self.status}, {self.samples} samples, now {fmt_value(self.value, self.unit)}, "
                f"{elapsed} s of ~{self.expected_s:.0f} s"
                + (f" (cap {self.cap_s:.0f} s)" if self.cap_s > self.expected_s else "")
                + (f", {self.phase}" if self.phase and not final else ""))
        status_line(self.out, line, tty=self.tty, final=final)


def phase_words(phase: dict | None) -> str:
    """The runner's phase (RunPublic.phase) in a few words: "kernel" or "hpcc 3/8: HPL N = 5,760, 2 processes"."""
    if not isinstance(phase, dict):
        return ""
    if phase.get("kind") != "reference":
        return str(phase.get("what") or "kernel")
    which = f" {phase['index']}/{phase['of']}" if phase.get("index") and phase.get("of") else ""
    return f"{phase.get('tool') or 'reference'}{which}" + (f": {phase['what']}" if phase.get("what") else "")


def status_line(out: IO[str], line: str, *, tty: bool, final: bool) -> None:
    """A progress line: rewritten in place on a terminal (ended by the final one), one line each elsewhere."""
    if tty:
        out.write("\r\x1b[K" + line + ("\n" if final else ""))
    else:
        out.write(line + "\n")
    out.flush()


def _epoch(run: dict, key: str) -> float | None:
    s = run.get(key)
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() if s else None
    except ValueError:
        return None


def follow_run(server: Server, run_id: int, *, out: IO[str] = sys.stderr, timeout_s: float | None = None) -> dict:
    """Follow run `run_id`'s live stream (GET /api/runs/{id}/events) to its end, showing progress on `out` (samples,
    the current value with its unit, elapsed / expected); reconnects where it left off (Last-Event-ID). Returns the
    run as it ended. `./hostbench wait` and `run SUITE --wait` use it."""
    prog = Progress(run_id, out, tty=out.isatty())
    last_seq = -1
    deadline = time.monotonic() + timeout_s if timeout_s else None
    drops = 0
    final: dict | None = None
    while final is None:
        if deadline and time.monotonic() > deadline:
            raise RemoteError(f"run {run_id} had not ended after {timeout_s:.0f} s (status {prog.status})")
        try:
            with server.client.stream("GET", f"/api/runs/{run_id}/events", params={"after_seq": last_seq},
                                      headers={"Accept": "text/event-stream"},
                                      timeout=httpx.Timeout(60.0, connect=10.0)) as r:
                if r.status_code in (429, 503):
                    time.sleep(_retry_after(r))
                    continue
                if r.status_code >= 400:
                    r.read()
                    server.check(r, f"run {run_id}")
                for event, data, eid in sse_events(r.iter_lines()):
                    drops = 0
                    body = json.loads(data)
                    if event == "sample":
                        prog.samples += 1
                        prog.value, prog.unit = body.get("value"), body.get("unit") or prog.unit
                        last_seq = int(eid) if eid and eid.lstrip("-").isdigit() else body.get("seq", last_seq)
                    elif event in ("run", "end"):
                        prog.status = body["status"]
                        prog.cap_s = float(body.get("expected_duration_s") or 0)
                        prog.expected_s = float(body.get("typical_duration_s") or prog.cap_s)
                        prog.phase = phase_words(body.get("phase"))
                        prog.started = _epoch(body, "started_at") or prog.started
                        prog.finished = _epoch(body, "finished_at")
                        prog.unit = prog.unit or body.get("unit") or ""
                        if event == "end":
                            final = body
                            break
                    prog.show()
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            drops += 1
            if drops > 5:
                raise RemoteError(f"lost the live stream of run {run_id} from {server.url}: {exc}") from None
            time.sleep(min(2.0 * drops, 10.0))
    prog.status = final["status"]
    prog.show(final=True)
    reason = f" ({final['status_reason']})" if final.get("status_reason") else ""
    verdict = (final.get("result") or {}).get("verdict")
    print(f"run {run_id} {final['status']}{reason}: {headline(final)}" + (f", verdict {verdict}" if verdict else ""),
          file=out)
    return final


def cmd_wait(server: Server, args: argparse.Namespace) -> int:
    run = follow_run(server, args.run_id, timeout_s=args.timeout)
    return 0 if run["status"] == RunStatus.succeeded else 1


# ---- export --------------------------------------------------------------------------------------------------------

def _open_out(path: str | None) -> tuple[IO[bytes], bool]:
    if path in (None, "-"):
        return sys.stdout.buffer, False
    try:
        return open(path, "wb"), True  # noqa: SIM115 - closed by the caller
    except OSError as exc:
        raise RemoteError(f"cannot write {path}: {exc.strerror}") from None


class _Meter:
    """Progress of a large export on stderr (only once it is large, or slow)."""

    def __init__(self, what: str) -> None:
        self.what, self.n, self.t0, self.shown = what, 0, time.monotonic(), 0.0
        self.tty = sys.stderr.isatty()

    def add(self, n: int, unit: str = "bytes") -> None:
        self.n += n
        now = time.monotonic()
        if now - self.t0 > 1.0 and now - self.shown > (0.5 if self.tty else 5.0):
            self.shown = now
            raw(sys.stderr).write(("\r\x1b[K" if self.tty else "") + f"{self.what}: {self.n:,} {unit}"
                                  + ("" if self.tty else "\n"))
            sys.stderr.flush()

    def done(self, unit: str = "bytes") -> None:
        if self.shown:
            raw(sys.stderr).write(("\r\x1b[K" if self.tty else "") + f"{self.what}: {self.n:,} {unit}\n")


def export_ndjson(server: Server, run_id: int, out: IO[bytes]) -> int:
    """Every sample of a run, one JSON object per line, paged from GET /api/runs/{id}/samples (SAMPLES_PAGE_MAX at a
    time, in seq order): memory bounded by one page whatever the run's length. Returns the number of samples."""
    server.get_json(f"/api/runs/{run_id}", f"run {run_id}")  # 404 before anything is written
    meter = _Meter(f"run {run_id} samples")
    after, n = -1, 0
    while True:
        page = server.get_json(f"/api/runs/{run_id}/samples", f"run {run_id} samples", after_seq=after,
                               limit=SAMPLES_PAGE_MAX)["data"]
        if not page:
            break
        out.write("".join(json.dumps(s, separators=(",", ":")) + "\n" for s in page).encode())
        n += len(page)
        meter.add(len(page), "samples")
        after = page[-1]["seq"]
        if len(page) < SAMPLES_PAGE_MAX:
            break
    meter.done("samples")
    return n


def cmd_export(server: Server, args: argparse.Namespace) -> int:
    out, is_file = _open_out(args.output)
    ok = False
    try:
        if args.format == "ndjson":
            n = export_ndjson(server, args.run_id, out)
            what = f"{n} samples"
        else:
            meter = _Meter(f"run {args.run_id} export")
            try:
                with server.client.stream("GET", f"/api/runs/{args.run_id}/export", params={"format": args.format},
                                          timeout=httpx.Timeout(300.0, connect=10.0)) as r:
                    if r.status_code >= 400:
                        r.read()
                        server.check(r, f"run {args.run_id} export")
                    for chunk in r.iter_bytes(64 * 1024):
                        out.write(chunk)
                        meter.add(len(chunk))
            except httpx.TimeoutException:
                raise RemoteError(f"{server.url} did not answer in time") from None
            except httpx.HTTPError as exc:
                raise RemoteError(f"cannot reach {server.url}: {exc}") from None
            meter.done()
            what = f"{meter.n:,} bytes"
        out.flush()
        ok = True
    finally:
        if is_file:
            out.close()
            if not ok:
                Path(args.output).unlink(missing_ok=True)
    if is_file:
        print(f"wrote run {args.run_id} ({args.format}, {what}) to {args.output}", file=sys.stderr)
    return 0


# ---- import -------------------------------------------------------------------------------------------------------

def import_reference(server: Server, tool: str, file: str, host: str) -> dict:
    """POST the file to /api/reference/imports: the server parses it and stores a history row of the host, marked
    imported. Returns the stored row."""
    try:
        body = Path(file).read_bytes()
    except OSError as exc:
        raise RemoteError(f"cannot read {file}: {exc.strerror}") from None
    host_id, _ = resolve_host(server, host)
    r = server.request("POST", "/api/reference/imports", f"importing {file}",
                       params={"host_id": host_id, "tool": tool, "file_name": Path(file).name[:255]},
                       content=body, headers={"Content-Type": "text/plain; charset=utf-8"})
    row: dict = r.json()
    return row


# ---- entry ---------------------------------------------------------------------------------------------------------

# ---- suites --------------------------------------------------------------------------------------------------------

def _duration(s: float) -> str:
    s = int(round(s))
    h, m, sec = s // 3600, s % 3600 // 60, s % 60
    return f"{h} h {m} min" if h else f"{m} min {sec} s" if m else f"{sec} s"


def resolve_name(server: Server, host_id: int) -> str:
    """A host's name for a table (its id when it cannot be read)."""
    try:
        return str(server.get_json(f"/api/hosts/{host_id}", f"host {host_id}")["name"])
    except RemoteError:
        return str(host_id)


def start_suite(server: Server, suite: str, hosts: list[str], peer: str | None = None) -> dict:
    """POST /api/suite-runs for the hosts given by name or id (and the peer that serves the two-host items, if
    given); the suite run as the API gives it."""
    body: dict = {"suite": suite, "host_ids": [resolve_host(server, h)[0] for h in hosts]}
    if peer:
        body["peer_host_id"] = resolve_host(server, peer)[0]
    r = server.request("POST", "/api/suite-runs", f"suite {suite!r}", json=body)
    return r.json()


def follow_suite(server: Server, suite_run_id: int, *, out: IO[str] = sys.stderr, poll_s: float = 2.0,
                 timeout_s: float | None = None, outage_s: float = FOLLOW_OUTAGE_S) -> dict:
    """Poll a suite run until no run of it is queued or running, showing its progress as one unit on `out` (runs
    done of all, the run going now, elapsed / expected). A server that stops answering is asked again for up to
    `outage_s` (the suite goes on on the server meanwhile). Returns it as it ended."""
    tty = out.isatty()
    t0 = time.monotonic()
    last = ""
    silent_since: float | None = None
    while True:
        try:
            sr = server.get_json(f"/api/suite-runs/{suite_run_id}", f"suite run {suite_run_id}")
        except Unreachable as exc:
            silent_since = silent_since or time.monotonic()
            if time.monotonic() - silent_since > outage_s:
                raise RemoteError(f"{exc} (for {outage_s:.0f} s; suite run {suite_run_id} goes on on the server: "
                                  f"./hostbench run --wait is not needed for it)") from None
            status_line(out, f"suite run {suite_run_id}: {exc}; asking again", tty=tty, final=not tty)
            time.sleep(poll_s)
            continue
        silent_since = None
        now = next((r for r in sr["runs"] if r["status"] in ON_HOST), None)
        going = f"; now run {now['id']} ({now['experiment']}{' ' + now['op'] if now['op'] else ''})" if now else ""
        line = (f"suite run {sr['id']} ({sr['title']}): {sr['runs_done']} of {sr['runs_total']} runs done "
                f"({sr['progress']:.0%}), {_duration(time.monotonic() - t0)} of {_estimate(sr)}{going}")
        if sr["status"] != "running":
            status_line(out, line, tty=tty, final=True)
            return sr
        # a terminal rewrites one line every poll; a log gets a line only when a run ends or another starts
        step = line if tty else f"{sr['runs_done']} {now['id'] if now else ''}"
        if step != last:
            status_line(out, line, tty=tty, final=False)
            last = step
        if timeout_s is not None and time.monotonic() - t0 > timeout_s:
            raise RemoteError(f"suite run {suite_run_id} had not ended after {timeout_s:.0f} s")
        time.sleep(poll_s)


def suite_table(sr: dict, names: dict[int, str]) -> str:
    """The runs of a suite run as they ended: figure, verdict, how long each took and when it ended."""
    head = ["RUN", "HOST", "EXPERIMENT", "OP", "STATUS", "VERDICT", "HEADLINE", "TOOK", "ENDED"]
    rows = []
    for r in sr["runs"]:
        start, end = _epoch(r, "started_at"), _epoch(r, "finished_at")
        took = _duration(end - start) if start is not None and end is not None else "—"
        rows.append([escape(c) for c in (
            str(r["id"]), names.get(r["host_id"], str(r["host_id"])), r["experiment"], r.get("op") or "—",
            r["status"], r.get("verdict") or "—", r.get("headline") or "—", took,
            (r.get("finished_at") or "—").replace("T", " ")[:19])])
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=False)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                     for line in [head, *rows])


def _estimate(sr: dict[str, Any]) -> str:
    """A suite run's time as the API gives it, in the words `wait` uses for a run: what it usually takes with the
    cap apart ("~1 h 35 min (cap 6 h 34 min)"); the cap alone, named as such, where the server gave no typical
    time."""
    cap = f"cap {_duration(sr['expected_duration_s'])}"
    typical = sr.get("typical_duration_s")
    return f"~{_duration(typical)} ({cap})" if typical is not None else f"({cap})"


def cmd_run(server: Server, args: argparse.Namespace, out: IO[str]) -> int:
    sr = start_suite(server, args.suite, [h.strip() for h in args.hosts.split(",") if h.strip()],
                     (args.peer or "").strip() or None)
    if args.json and not args.wait:
        json.dump(sr, out, indent=1)
        out.write("\n")
        return 0
    peer = f" (peer {sr['peer_host_id']} serving the two-host items)" if sr.get("peer_host_id") else ""
    print(f"suite run {sr['id']}: {sr['title']} on hosts {', '.join(map(str, sr['host_ids']))}{peer}: "
          f"{sr['runs_total']} runs, {_estimate(sr)}", file=sys.stderr)
    for why in sr["skipped"]:
        print(f"  left out: {why}", file=sys.stderr)
    if not args.wait:
        print(sr["id"], file=out)
        return 0
    try:
        end = follow_suite(server, sr["id"], timeout_s=args.timeout)
    except KeyboardInterrupt:
        print(f"\nstopped following; suite run {sr['id']} goes on (cancel it: POST /api/suite-runs/{sr['id']}/cancel "
              "or the dashboard's Suites page)", file=sys.stderr)
        raise
    if args.json:
        json.dump(end, out, indent=1)
        out.write("\n")
    else:
        names = {h: resolve_name(server, h) for h in {r["host_id"] for r in end["runs"]}}
        print(suite_table(end, names), file=out)
    bad = [r for r in end["runs"] if r["status"] != RunStatus.succeeded]
    which = ", ".join(f"{r['id']} {r['status']}" for r in bad[:10])
    print(f"suite run {end['id']} {end['status']}: {end['runs_total'] - len(bad)} of {end['runs_total']} runs "
          "succeeded" + (f"; not: {which}" if bad else ""), file=sys.stderr)
    return 0 if end["status"] == "succeeded" else 1


def main(args: argparse.Namespace, command: Callable[[Server, argparse.Namespace], int] | None = None) -> int:
    """Run one remote command (args.cmd here, or `command`: one of another module, `mesh`); RemoteError and Ctrl-C
    become one line and an exit status."""
    server: Server | None = None
    try:
        server = Server.from_args(args)
        if command is not None:
            return command(server, args)
        if args.cmd == "runs":
            if args.wait is not None:
                args.run_id, args.timeout = args.wait, None
                return cmd_wait(server, args)
            return cmd_runs(server, args, sys.stdout)
        if args.cmd == "wait":
            return cmd_wait(server, args)
        if args.cmd == "run":
            return cmd_run(server, args, sys.stdout)
        if args.cmd == "export":
            return cmd_export(server, args)
        if args.cmd == "parse":
            row = import_reference(server, args.tool, args.file, args.host)
            json.dump(row, sys.stdout, indent=1)
            sys.stdout.write("\n")
            print(f"imported {args.file} ({row['tool']}, {len(row['metrics'])} metrics) into the history of "
                  f"{row['host_name']} as imported result {row['id']}", file=sys.stderr)
            return 0
        raise RemoteError(f"unknown command {args.cmd}")
    except RemoteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if server is not None:
            server.close()
