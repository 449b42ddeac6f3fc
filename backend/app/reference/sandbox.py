"""An uploaded reference-tool output is parsed in a child process with a CPU-time budget.

The parsers are linear-time (common/tests/reftools/adversarial.py times each on adversarial input of the largest
upload), and this is the second fence: whatever a future pattern does, one request costs an API process at most
PARSE_CPU_S of CPU in a child (RLIMIT_CPU, then a wall-clock deadline and SIGKILL), never the process itself.
At most PARSE_SLOTS children per API process at once; a request that finds none free within the budget gets 429.
Children come from a fork server that has the parsers imported already, so a parse starts in milliseconds.
"""
from __future__ import annotations

import multiprocessing
import resource
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

PARSE_CPU_S = 10  # CPU seconds one upload may cost; the largest adversarial upload takes well under 1 s
PARSE_SLOTS = 2  # parses at once per API process
_slots = threading.BoundedSemaphore(PARSE_SLOTS)
_ctx = multiprocessing.get_context("forkserver")
_ctx.set_forkserver_preload(["hostbench_common.reftools"])


class Refused(Exception):
    """The output is not one the parser will read (ParseError), or it cost more than the budget."""


class Busy(Exception):
    """No parse slot came free in time."""


def _child(conn: Connection, cpu_s: int, func: Callable[..., Any], args: tuple[Any, ...]) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))  # SIGXCPU, then SIGKILL from the kernel
    from hostbench_common.reftools import ParseError

    try:
        conn.send(("ok", func(*args)))
    except ParseError as exc:
        conn.send(("refused", str(exc)))
    except Exception as exc:  # a parser's bug: said as such, never mistaken for the CPU limit
        conn.send(("refused", f"the parser failed on this output ({type(exc).__name__}): not a report it reads"))
    finally:
        conn.close()


def run_limited(cpu_s: int, func: Callable[..., Any], *args: Any) -> Any:
    """func(*args) (a module-level function) in a child that may use cpu_s of CPU. Raises Refused or Busy."""
    if not _slots.acquire(timeout=cpu_s):
        raise Busy(f"{PARSE_SLOTS} uploads are being parsed already; try again shortly")
    try:
        receive, send = _ctx.Pipe(duplex=False)
        child = _ctx.Process(target=_child, args=(send, cpu_s, func, args), daemon=True)
        child.start()
        send.close()
        try:
            # the wall-clock deadline leaves room for a machine busy with other work; the CPU limit is the bound
            answer = receive.recv() if receive.poll(3 * cpu_s + 5) else None
        except EOFError:  # the child died without answering: killed at its CPU limit
            answer = None
        finally:
            receive.close()
            child.join(1)
            if child.is_alive():
                child.kill()
                child.join()
    finally:
        _slots.release()
    if answer is None:
        raise Refused(f"reading it took more than {cpu_s} s of CPU time: not a report this server will read")
    kind, value = answer
    if kind == "refused":
        raise Refused(value)
    return value


def parse(tool: str, text: str) -> dict[str, Any]:
    """parse_text(tool, text) within PARSE_CPU_S of CPU."""
    from hostbench_common.reftools import parse_text

    return run_limited(PARSE_CPU_S, parse_text, tool, text)  # type: ignore[no-any-return]
