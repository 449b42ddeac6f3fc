"""The FMA issue-rate probe, after the runner started (issue 28): never between the runner and its registration or
its heartbeats. On a busy small machine the probe took ~10 s of CPU and ~45 s of wall time, and a disturbed
probe, not kept, was taken again at every start before the runner registered.

Now the runner registers with the probe it kept in its state directory (inventory.fma_probe.read_cache), quiet or
disturbed (a disturbed one is marked so: no FMA units where it was disturbed, and the peak inferred from it says
the units were assumed: docs/methodology/peaks.md). Then, if it kept none, or a disturbed one and the machine's
other CPUs are quiet now, this thread probes: the daemon takes no run meanwhile (`wanted`: its idle step waits
instead of claiming, so no benchmark of its own shares the CPU with the probe, nor the probe with a benchmark). A
probe that says more than the kept one (any probe where none was kept, a quiet one over a disturbed one) is kept
and sent with a heartbeat at once."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .inventory import fma_probe, probe_isas

log = logging.getLogger("hostbench.probe")


class BackgroundProbe:
    def __init__(self, kernel_bin: Path, cpu: dict[str, Any], key: str, cache: Path,
                 on_probe: Callable[[dict[str, Any]], None], busy: Callable[[], float | None] = fma_probe.others_busy):
        self.kernel_bin, self.cpu, self.key, self.cache = kernel_bin, cpu, key, cache
        self.on_probe = on_probe
        self.busy = busy
        self.wanted = threading.Event()  # set while the daemon must take no run: the probe is about to run or runs
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="fma-probe", daemon=True)

    @classmethod
    def plan(cls, kernel_bin: Path | None, inventory: dict[str, Any] | None, cache: Path,
             on_probe: Callable[[dict[str, Any]], None]) -> BackgroundProbe | None:
        """A background probe when one is worth taking, else None: no kernel or no CPU section (nothing to probe),
        or a quiet probe already kept for this CPU and kernel build."""
        cpu = (inventory or {}).get("cpu")
        if kernel_bin is None or not isinstance(cpu, dict) or "error" in cpu:
            return None
        kept = cpu.get("fma_probe")
        if fma_probe.quiet(kept):
            return None
        return cls(kernel_bin, cpu, fma_probe.cache_key(cpu, (inventory or {}).get("kernel")), cache, on_probe)

    def start(self) -> None:
        kept = self.cpu.get("fma_probe")
        if isinstance(kept, dict) and kept.get("isa"):
            busy = self.busy()  # a disturbed probe is kept: taken again only where this one could be quiet
            if busy is None or busy > fma_probe.NEIGHBOURS_BUSY_MAX:
                log.info("FMA probe: the one kept was disturbed, and the other CPUs are busy now (%s): keeping it "
                         "(marked disturbed) until a quieter start", "unknown" if busy is None else f"{busy:.0%}")
                self.done.set()
                return
        self.wanted.set()
        self.thread.start()

    def _run(self) -> None:
        t0 = time.monotonic()
        try:
            fresh = fma_probe.run(self.kernel_bin, probe_isas(self.cpu))
            kept = self.cpu.get("fma_probe")
            better = bool(fresh and fresh.get("isa")) and (not isinstance(kept, dict) or not kept.get("isa")
                                                           or fma_probe.quiet(fresh))
            if fresh is not None and better:
                fma_probe.keep(self.cache, self.key, fresh)
                self.on_probe(fresh)
            log.info("FMA probe taken in the background in %.1f s: %s", time.monotonic() - t0,
                     "quiet, kept" if fma_probe.quiet(fresh) else
                     "disturbed, kept marked so" if better else "disturbed; the one kept stays")
        except Exception:  # a probe never stops the runner
            log.exception("FMA probe failed")
        finally:
            self.wanted.clear()
            self.done.set()
