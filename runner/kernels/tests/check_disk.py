"""The disk kernel's part of `make check` (called from check.py): its C tests, its parameters,
every op and engine verifying on a tiny file, the refusals that teach, the file never left behind
(normal end, SIGTERM, SIGKILL), and corruption turning the run untrusted. Small files and 0.2-s
phases: the whole part takes a few seconds."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

MiB = 1 << 20


def run(c):
    """c: the check.py module (check, hbk, of_type, BUILD, HBK, HBK_TEST)."""
    work = tempfile.mkdtemp(prefix="check-disk-", dir=os.path.abspath(c.BUILD))
    try:
        Checks(c, work).all()
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Checks:
    def __init__(self, c, work):
        self.c = c
        self.work = work
        self.direct_ok = None

    def all(self):
        for name in sorted(n for n in dir(self) if n.startswith("t_")):
            before = self.c.failed
            t0 = time.time()
            try:
                getattr(self, name)()
            except Exception as e:  # a crash is a failure of that check, not of the suite
                self.c.check(False, f"disk {name} raised {type(e).__name__}: {e}")
            if os.environ.get("VERBOSE"):
                print(f"disk {name}: {'ok' if self.c.failed == before else 'FAILED'} "
                      f"({time.time() - t0:.1f} s)")

    # ---- helpers ----

    def args(self, *extra, size=4 * MiB):
        """Small-run defaults, each replaced where extra names it (a name given twice is refused)."""
        base = {"--workdir": self.work, "--file_size": str(size), "--threads": "1", "--repeats": "1",
                "--duration_s": "0.2", "--warmup_s": "0", "--blocks": "4096"}
        extra = list(extra)
        for i in range(0, len(extra) - 1, 2):
            base.pop(extra[i], None)
        return [x for kv in base.items() for x in kv] + extra

    def disk(self, *extra, size=4 * MiB, exe=None, env=None):
        return self.c.hbk("disk", *self.args(*extra, size=size), exe=exe or self.c.HBK, env=env)

    def leftovers(self):
        return [n for n in os.listdir(self.work)]

    def bad(self, rc, lines, code, word, what):
        ok = (rc == {"bad_param": 2, "unsupported": 3}[code] and len(lines) == 1 and
              lines[0].get("type") == "error" and lines[0].get("code") == code and
              word in lines[0].get("message", ""))
        self.c.check(ok, f"disk {what}: exit {code} before any start, message with {word!r}; "
                         f"got {rc} {lines}")

    def direct_works(self):
        if self.direct_ok is None:
            rc, lines, _ = self.disk("--op", "rand_read", "--blocks", "4096", "--direct", "true")
            self.direct_ok = rc == 0
            if rc == 3:
                print(f"disk: O_DIRECT unsupported in {self.work}: direct checks skipped "
                      f"({lines[-1].get('message')})")
        return self.direct_ok

    # ---- checks ----

    def t_c_tests(self):
        p = subprocess.run([os.path.join(self.c.BUILD, "tests", "test_disk")], capture_output=True,
                           text=True)
        if p.stderr:
            print(p.stderr, end="")
        m = re.search(r"(\d+) passed, (\d+) failed\s*$", p.stdout)
        if self.c.check(m is not None and p.returncode == (int(m.group(2)) != 0),
                        "test_disk summary"):
            self.c.passed += int(m.group(1))
            self.c.failed += int(m.group(2))

    def t_describe(self):
        rc, lines, _ = self.c.hbk("disk", "--describe")
        props = lines[0]["parameters"]["properties"] if rc == 0 and lines else {}
        self.c.check(list(props)[:12] == ["op", "blocks", "direct", "iodepth", "submit_batch",
                                          "engine", "file_size", "cold_cache", "fsync_writes",
                                          "hugepages", "placement", "workdir"],
                     f"disk params in order: {list(props)}")
        self.c.check(props.get("op", {}).get("items", {}).get("enum") ==
                     ["rw", "seq_read", "seq_write", "rand_read", "rand_write"] and
                     props["op"]["type"] == "array", "disk op is a list of the five ops")
        self.c.check(props.get("blocks", {}).get("default") == [8, 8192, 8388608, 83886080] and
                     props["blocks"]["items"]["minimum"] == 1 and
                     props["blocks"]["items"]["maximum"] == 83886080, "disk blocks 1 B..80 MiB")
        self.c.check((props.get("file_size", {}).get("minimum"), props["file_size"]["maximum"],
                      props["file_size"]["default"]) == (MiB, 64 << 30, 1 << 30), "file_size bounds")
        self.c.check((props.get("iodepth", {}).get("minimum"), props["iodepth"]["maximum"]) == (1, 256),
                     "iodepth 1..256")
        self.c.check(props.get("workdir", {}).get("type") == "string" and
                     props["workdir"]["maxLength"] == 4096, "workdir is a bounded string")
        self.c.check(props.get("engine", {}).get("enum") == ["auto", "io_uring", "libaio", "psync"],
                     "engine choices")

    def t_every_op_buffered_verifies(self):
        rc, lines, raw = self.disk("--op", "rw,seq_read,seq_write,rand_read,rand_write",
                                   "--blocks", "1,8,1000,4096", "--direct", "false")
        res = self.c.of_type(lines, "result")
        self.c.check(rc == 0 and len(res) == 20 and all(r["verified"] for r in res),
                     f"disk buffered: 5 ops x 4 blocks verified: rc {rc} {raw[-300:]}")
        keys = {"iops", "lat_avg_us", "lat_p50_us", "lat_p99_us", "lat_p999_us", "reads", "writes"}
        self.c.check(all(keys <= set(r) for r in res), "disk results carry iops and latency")
        self.c.check(all(r["lat_p50_us"] <= r["lat_p99_us"] <= r["lat_p999_us"] and r["iops"] > 0 and
                         abs(r["iops"] * r["block_bytes"] / 1e6 - r["value"]) <= 1e-6 * r["value"] + 1e-9
                         for r in res), "p50 <= p99 <= p99.9; MB/s = IOPS x block")
        by = {(r["op"], r["block_bytes"]): r for r in res}
        self.c.check(all(by[(o, b)]["writes"] == 0 and by[(o, b)]["reads"] > 0
                         for o in ("seq_read", "rand_read") for b in (1, 8, 1000, 4096)) and
                     all(by[(o, b)]["reads"] == 0 and by[(o, b)]["writes"] > 0
                         for o in ("seq_write", "rand_write") for b in (1, 8, 1000, 4096)) and
                     all(by[("rw", b)]["reads"] > 0 and by[("rw", b)]["writes"] > 0
                         for b in (1, 8, 1000, 4096)), "reads and writes as the op says")
        self.c.check(all(r["io_mode"] == ("cache_dropped" if r["op"] in ("seq_read", "rand_read") else "buffered")
                         for r in res) and all(r["io_mode_why"] for r in res),
                     f"disk --direct false: reads cache_dropped, unflushed writes buffered: "
                     f"{sorted({(r['op'], r['io_mode']) for r in res})}")
        start = lines[0] if lines else {}
        self.c.check(start.get("engine") == "psync" and start.get("file", "").startswith("hbk-disk-") and
                     start.get("filesystem") and start.get("verify") and start.get("latency"),
                     f"disk start facts: {start.get('engine')}, {start.get('file')}")
        self.c.check(self.leftovers() == [], f"no file left after a run: {self.leftovers()}")

    def t_engines_and_depths(self):
        for engine, depth in (("io_uring", 8), ("libaio", 4), ("psync", 1), ("auto", 4)):
            rc, lines, raw = self.disk("--op", "rand_read,rw", "--blocks", "4096", "--iodepth",
                                       str(depth), "--engine", engine)
            if rc == 3:
                print(f"disk: engine {engine} unavailable: {lines[-1].get('message')}")
                continue
            res = self.c.of_type(lines, "result")
            self.c.check(rc == 0 and len(res) == 2 and all(r["verified"] for r in res) and
                         lines[0].get("engine") in ("io_uring", "libaio", "psync") and
                         lines[0].get("engine_why"), f"disk engine {engine} depth {depth}: {raw[-300:]}")
        rc, lines, _ = self.disk("--engine", "psync", "--iodepth", "4")
        self.bad(rc, lines, "bad_param", "one I/O at a time", "psync at depth 4")

    def t_direct(self):
        if not self.direct_works():
            return
        rc, lines, raw = self.disk("--op", "seq_write,rand_read,rw", "--blocks", "512,4096,65536",
                                   "--direct", "true", "--iodepth", "4", "--threads", "2",
                                   "--placement", "spread")
        res = self.c.of_type(lines, "result")
        self.c.check(rc == 0 and len(res) == 9 and all(r["verified"] for r in res),
                     f"disk direct, depth 4, 2 threads: {raw[-300:]}")
        self.c.check(lines[0].get("direct") is True and lines[0].get("logical_block_bytes", 0) >= 512,
                     "direct start facts")
        self.c.check(all(r["io_mode"] == "direct" for r in res), "direct rows say io_mode direct")

    def t_direct_is_the_default(self):
        # Device figures by default: O_DIRECT wherever the block allows it; a block direct I/O cannot
        # move runs buffered with the cache dropped and its writes flushed in the window, and says so.
        if not self.direct_works():
            return
        rc, lines, raw = self.disk("--op", "seq_read,seq_write", "--blocks", "8,100,4096")
        res = self.c.of_type(lines, "result")
        by = {(r["op"], r["block_bytes"]): r for r in res}
        self.c.check(rc == 0 and len(res) == 6 and all(r["verified"] for r in res) and
                     lines[0].get("direct") is True, f"disk default run: 2 ops x 3 blocks: {raw[-300:]}")
        self.c.check(len(by) == 6 and all(by[(o, 4096)]["io_mode"] == "direct" for o in ("seq_read", "seq_write")),
                     "disk default: a 4 KiB block runs O_DIRECT")
        odd = [by.get((o, b), {}) for o in ("seq_read", "seq_write") for b in (8, 100)]
        self.c.check(all(r.get("io_mode") == "cache_dropped" and "logical block size" in r.get("io_mode_why", "")
                         for r in odd), f"disk default: 8 B and 100 B blocks run cache_dropped, saying why: {odd}")
        self.c.check("fdatasync" in by.get(("seq_write", 8), {}).get("io_mode_why", ""),
                     "disk default: a cache_dropped write row is flushed inside the window")

    def t_memory_backed_is_buffered(self):
        # tmpfs: nothing under it to measure, whatever direct says
        shm = "/dev/shm"  # noqa: S108 - a tmpfs on purpose: the kernel must call it memory, not a device
        if not os.path.isdir(shm) or not os.access(shm, os.W_OK):
            return
        d = tempfile.mkdtemp(prefix="check-disk-", dir=shm)
        try:
            rc, lines, raw = self.disk("--workdir", d, "--op", "rand_read")
            res = self.c.of_type(lines, "result")
            self.c.check(rc == 0 and len(res) == 1 and res[0]["io_mode"] == "buffered" and
                         "memory" in res[0]["io_mode_why"] and lines[0].get("memory_backed") is True,
                         f"disk on tmpfs: io_mode buffered, memory-backed: {raw[-300:]}")
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def t_huge_page_buffers(self):
        # 16 x 256 KiB = 4 MiB of buffers: on transparent huge pages unless told not to. The kernel may
        # refuse THP (disabled, or "never"), so "true" is checked only where this host grants them.
        if not self.direct_works():
            return
        thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read() \
            if os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled") else "[never]"
        got = {}
        for huge in ("true", "false"):
            rc, lines, raw = self.disk("--op", "seq_read", "--blocks", "262144", "--direct", "true",
                                       "--iodepth", "16", "--hugepages", huge, size=16 * MiB)
            res = self.c.of_type(lines, "result")
            ok = rc == 0 and len(res) == 1 and res[0]["verified"] and lines[0].get("hugepages") is (huge == "true")
            self.c.check(ok, f"disk --hugepages {huge}: verified, start event says so: {raw[-300:]}")
            got[huge] = res[0].get("huge_page_buffers") if ok else None
        self.c.check(got["false"] is False, f"disk --hugepages false: 4 KiB-page buffers, got {got['false']}")
        if "[never]" not in thp:
            self.c.check(got["true"] is True, f"disk --hugepages true on THP {thp.strip()!r}: got {got['true']}")

    def t_queue_stays_full(self):
        # Little's law: with iodepth I/Os always in flight, mean latency x IOPS = iodepth. A loop that
        # reaps a burst at one timestamp and refills slot by slot books the refill as idle time and
        # lands well below it (about 28 of 32 on a virtual disk); edges of the phase cost a little.
        if not self.direct_works():
            return
        for engine in ("io_uring", "libaio"):
            rc, lines, raw = self.disk("--op", "rand_read", "--blocks", "4096", "--direct", "true",
                                       "--iodepth", "16", "--engine", engine, "--duration_s", "0.5",
                                       size=16 * MiB)
            if rc == 3:
                print(f"disk: engine {engine} unavailable: {lines[-1].get('message')}")
                continue
            res = self.c.of_type(lines, "result")
            ok = rc == 0 and len(res) == 1 and res[0]["verified"]
            inflight = res[0]["iops"] * res[0]["lat_avg_us"] / 1e6 if ok else 0
            self.c.check(ok and 15.2 <= inflight <= 16.1,
                         f"disk {engine} depth 16: IOPS x mean latency = {inflight:.2f} I/Os in flight "
                         f"(want 16): {raw[-300:] if not ok else ''}")

    def t_fsync_and_placement(self):
        rc, lines, raw = self.disk("--op", "seq_write,seq_read", "--blocks", "65536", "--fsync_writes",
                                   "true", "--placement", "unpinned", "--cold_cache", "false", "--direct", "false")
        res = self.c.of_type(lines, "result")
        self.c.check(rc == 0 and len(res) == 2 and all(r["verified"] for r in res) and
                     lines[0].get("placement") == "unpinned" and lines[0].get("cold_cache") is False,
                     f"disk fsync_writes, unpinned, warm cache: {raw[-200:]}")

    def t_refusals_teach(self):
        rc, lines, _ = self.c.hbk("disk", *self.args(), "--workdir", "x")
        self.bad(rc, lines, "bad_param", "given twice", "workdir twice")
        rc, lines, _ = self.disk("--workdir", os.path.join(self.work, "nope"))
        self.bad(rc, lines, "bad_param", "does not exist", "missing workdir")
        rc, lines, _ = self.disk("--file_size", "1050000")
        self.bad(rc, lines, "bad_param", "multiple of 4096", "odd file_size")
        rc, lines, _ = self.disk("--blocks", str(8 * MiB), size=4 * MiB)
        self.bad(rc, lines, "bad_param", "larger than file_size", "block > file")
        rc, lines, _ = self.disk("--op", "seq_read", "--blocks", str(MiB), "--threads", "8")
        self.bad(rc, lines, "bad_param", "slice", "seq slices smaller than a block")
        rc, lines, _ = self.disk("--blocks", str(80 * MiB), "--iodepth", "256", size=80 * MiB)
        self.bad(rc, lines, "bad_param", "quarter", "buffers larger than a quarter of RAM")
        rc, lines, _ = self.disk("--blocks", ",".join(str(1 << k) for k in range(13)))
        self.bad(rc, lines, "bad_param", "configurations", "more than 64 configurations")
        rc, lines, _ = self.disk("--workdir", "/tmp/a\nb")  # noqa: S108 - must be refused (newline); never created
        self.bad(rc, lines, "bad_param", "control", "workdir with a newline")
        rc, lines, _ = self.disk("--op", "read")
        self.bad(rc, lines, "bad_param", "rw, seq_read", "unknown op")
        self.c.check(self.leftovers() == [], f"no file left after refusals: {self.leftovers()}")

    def t_workdir_owned(self):
        if os.geteuid() != 0:
            return  # chown to another user needs root
        other = os.path.join(self.work, "other")
        os.mkdir(other)
        os.chown(other, 65534, 65534)
        rc, lines, _ = self.disk("--workdir", other)
        self.bad(rc, lines, "bad_param", "belongs to uid 65534", "workdir of another user")
        os.rmdir(other)

    def t_free_space_reserve(self):
        rc, lines, _ = self.disk(size=1 << 30, exe=self.c.HBK_TEST,
                                 env={"HBK_TEST_FREE_BYTES": str(1900 * MiB)})
        self.bad(rc, lines, "unsupported", "reserve", "file larger than free space minus reserve")

    def t_corruption_is_untrusted(self):
        rc, lines, _ = self.disk("--op", "rand_read", "--blocks", "4096", exe=self.c.HBK_TEST,
                                 env={"HBK_TEST_CORRUPT": "1"})
        res = self.c.of_type(lines, "result")
        end = lines[-1] if lines else {}
        self.c.check(rc == 4 and len(res) == 1 and res[0]["verified"] is False and
                     "is wrong" in res[0].get("reason", ""),
                     f"disk corrupt read: exit 4, verified false: {rc} {res}")
        self.c.check(end.get("status") == "untrusted", "disk corrupt: end untrusted")

    def t_signals_leave_nothing(self):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            p = subprocess.Popen([self.c.HBK, "disk", *self.args("--op", "rand_read", "--blocks", "4096",
                                                                 "--repeats", "20")],
                                 stdout=subprocess.PIPE, text=True)
            first = json.loads(p.stdout.readline() or "{}")
            time.sleep(0.3)
            p.send_signal(sig)
            rest = p.stdout.read().splitlines()
            p.wait(timeout=10)
            self.c.check(first.get("type") == "start", f"disk {sig.name}: start line first")
            if sig == signal.SIGTERM:
                last = json.loads(rest[-1]) if rest else {}
                self.c.check(p.returncode == 1 and last.get("code") == "internal" and
                             last.get("message", "").startswith("interrupted"),
                             f"disk SIGTERM: interrupted error, exit 1: {p.returncode} {last}")
            self.c.check(self.leftovers() == [], f"disk {sig.name}: no file left: {self.leftovers()}")
        # interrupted while the file is being written
        p = subprocess.Popen([self.c.HBK, "disk", *self.args(size=256 * MiB)],
                             stdout=subprocess.PIPE, text=True)
        time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        out = p.stdout.read().splitlines()
        p.wait(timeout=10)
        last = json.loads(out[-1]) if out else {}
        self.c.check(p.returncode in (0, 1) and (p.returncode == 0 or
                     last.get("message", "").startswith("interrupted")),
                     f"disk SIGTERM during the pre-fill: {p.returncode} {last}")
        self.c.check(self.leftovers() == [], f"disk SIGTERM in pre-fill: no file left: {self.leftovers()}")

    def t_hot_path_in_assembly(self):
        """The work loops really issue the I/O and check what they read: the calls (relocations)
        in objdump -dr of disk_io.o, whatever the compiler inlined."""
        obj = os.path.join(self.c.BUILD, "obj", "kernels", "disk_io.o")
        if not shutil.which("objdump") or not os.path.exists(obj):
            return
        asm = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", obj], capture_output=True,
                             text=True).stdout
        funcs = {}
        for m in re.finditer(r"^[0-9a-f]+ <([^>.]+)[^>]*>:\n(.*?)(?=\n\n|\Z)", asm, re.S | re.M):
            funcs[m.group(1)] = funcs.get(m.group(1), "") + m.group(2)

        def calls(f):
            return set(re.findall(r"R_X86_64_PLT32\s+(\w+)", funcs.get(f, "")))
        if not funcs.get("disk_work") or "R_X86_64_PLT32" not in asm:
            return  # not x86-64 ELF: nothing to read
        self.c.check({"pread", "pwrite", "hb_now_ns"} <= calls("disk_work") | calls("work_psync"),
                     f"psync loop calls pread/pwrite: {sorted(calls('disk_work'))}")
        self.c.check("hb_disk_check" in calls("complete"), "every completion is checked")
        self.c.check("hb_uring_submit" in calls("work_uring") | calls("disk_work") and
                     "hb_aio_submit" in calls("work_aio") | calls("disk_work"), "async loops submit")
