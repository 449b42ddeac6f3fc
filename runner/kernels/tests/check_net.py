#!/usr/bin/env python3
"""`make check` for the net kernel (called from check.py): its C asserts, its parameters as
--describe publishes them, refusals before any work, every op over loopback with tiny phases,
a serve/drive pair over loopback (IPv4 and IPv6), a driver pointed at nobody, corruption
caught (test build), then check_net_netns.py (two namespaces; skipped unless root). Loopback
addresses only here. Standalone: python3 tests/check_net.py build"""

import json
import os
import re
import signal
import subprocess
import sys
import time

from check_results import results_declared  # tests/check_results.py

OPS = ("tcp_stream", "udp_stream", "tcp_rr", "udp_rr")


def run(build, check):
    hbk = os.path.join(build, "hbk")
    hbk_test = os.path.join(build, "hbk-test")

    def call(*args, exe=hbk, env=None, timeout=60):
        p = subprocess.run([exe, "net", *args], capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **(env or {})))
        lines = []
        for raw in p.stdout.splitlines():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                lines.append({"type": "<not json>", "raw": raw})
        results_declared(exe, "net", lines, check, f"{exe} net {' '.join(args[:4])}")
        return p.returncode, lines, p.stdout + p.stderr

    def of(lines, t):
        return [x for x in lines if x.get("type") == t]

    def tiny(*args):
        return ["--duration_s", "0.3", "--repeats", "1", "--warmup_s", "0", *args]

    # ---- C asserts ----
    p = subprocess.run([os.path.join(build, "tests", "test_net")], capture_output=True, text=True)
    m = re.search(r"(\d+) passed, (\d+) failed\s*$", p.stdout)
    check(m is not None and p.returncode == 0 and m.group(2) == "0",
          f"test_net: {p.stdout.strip()} {p.stderr.strip()}")

    # ---- parameters ----
    rc, lines, raw = call("--describe")
    props = lines[0]["parameters"]["properties"] if rc == 0 and lines else {}
    check(list(props)[:11] == ["role", "op", "sizes", "poll", "peer", "port", "bind", "server_cpu",
                               "client_cpu", "sockbuf_kib", "serve_s"], f"net params: {list(props)}")
    check("threads" not in props and props.get("streams", {}).get("items", {}).get("maximum") == 8
          and props["streams"]["default"] == [1], f"streams 1..8 replaces threads: {props.get('streams')}")
    check(props.get("sizes", {}).get("default") == [1, 1024, 65536], "sizes default 1,1024,65536")
    check(props.get("op", {}).get("enum") == list(OPS), "op enum")
    check(props.get("poll", {}).get("enum") == ["blocking", "busy"], "poll enum")
    check(props.get("peer", {}).get("type") == "string" and props["peer"]["maxLength"] == 45,
          "peer is a bounded string")

    bad = [
        (["--op", "udp_stream", "--sizes", "65508"], "65507"),
        (["--op", "udp_rr", "--sizes", "1,70000"], "65507"),
        (["--role", "drive", "--peer", "localhost", "--port", "5201"], "never looked up"),
        (["--role", "drive", "--peer", "10.0.0.2"], "needs --port"),
        (["--role", "serve", "--bind", "example.com"], "not an IPv4 or IPv6"),
        (["--op", "tcp_stream", "--poll", "busy"], "poll busy applies"),
        (["--client_cpu", "4095"], "client_cpu 4095"),
        (["--server_cpu", "4095"], "server_cpu 4095"),
        (["--streams", "9"], "above the maximum 8"),
        (["--threads", "2"], "unknown parameter"),
        (["--sizes", "0"], "below the minimum 1"),
        (["--port", "65536"], "above the maximum 65535"),
    ]
    for args, word in bad:
        rc, lines, raw = call(*args)
        check(rc == 2 and len(lines) == 1 and lines[0].get("code") == "bad_param"
              and word in lines[0].get("message", ""), f"net {args}: bad_param with {word!r}: {raw!r}")

    # ---- every op over loopback ----
    for op in OPS:
        size = "1,1024" if op == "udp_stream" else "64"
        rc, lines, raw = call("--op", op, "--sizes", size, *tiny())
        res = of(lines, "result")
        what = f"loopback {op}"
        check(rc == 0 and lines and lines[-1].get("status") == "ok" and
              len(res) == len(size.split(",")), f"{what}: {rc} {raw[-400:]!r}")
        start = lines[0] if lines else {}
        check(start.get("role") == "loopback" and start.get("peer") == "127.0.0.1" and
              0 < start.get("port", 0) < 65536, f"{what}: start facts")
        for r in res:
            check(r["verified"] is True and r["value"] > 0 and r["op"] == op, f"{what}: {r}")
            # every op's serving side reports its run-queue wait (tcp_rr's echo side at the clean close)
            check(0 <= r.get("peer_wait_share", -1) <= 1, f"{what}: the peer's run-queue wait is reported {r}")
            if op == "tcp_stream":
                check(r["unit"] == "Mbit/s" and r["receiver_bytes"] == r["sender_bytes"] > 0
                      and r["work"] == r["receiver_bytes"] and r["checked_bytes"] > 0,
                      f"{what}: byte counts agree {r}")
            elif op == "udp_stream":
                check(r["unit"] == "Mbit/s" and 0 < r["datagrams_received"] <= r["datagrams_sent"]
                      and 0 <= r["loss_pct"] < 100 and r["work"] == r["receiver_bytes"],
                      f"{what}: sent, received, loss {r}")
            else:
                lat = r.get("latency_us", {})
                check(r["unit"] == "RT/s" and r["round_trips"] == r["work"] > 0 and
                      0 < lat.get("min", 0) <= lat.get("p50", 0) <= lat.get("p99", 0)
                      <= lat.get("max", 0) and lat["min"] <= lat["avg"] <= lat["max"],
                      f"{what}: latency avg/p50/p99 {r}")
    rc, lines, raw = call("--op", "tcp_rr", "--sizes", "64", "--poll", "busy", "--client_cpu",
                          "0", "--server_cpu", "0" if len(os.sched_getaffinity(0)) < 2 else "1",
                          *tiny())
    check(rc == 0 and of(lines, "result") and of(lines, "result")[0]["verified"] and
          lines[0].get("poll") == "busy", f"busy poll tcp_rr: {raw[-300:]!r}")
    rc, lines, raw = call("--op", "tcp_stream", "--sizes", "1024", "--streams", "2",
                          "--bind", "::1", *tiny())
    res = of(lines, "result")
    check(rc == 0 and res and res[0]["threads"] == 2 and lines[0].get("family") == "ipv6"
          and res[0]["receiver_bytes"] == res[0]["sender_bytes"], f"2 streams over ::1: {raw[-300:]!r}")

    # ---- serve and drive ----
    for bind in ("127.0.0.1", "::1"):
        srv = subprocess.Popen([hbk, "net", "--role", "serve", "--bind", bind, "--serve_s", "30"],
                               stdout=subprocess.PIPE, text=True)
        try:
            start = json.loads(srv.stdout.readline() or "{}")
            listening = json.loads(srv.stdout.readline() or "{}")
            check(start.get("type") == "start" and start.get("role") == "serve" and
                  listening.get("type") == "listening" and listening.get("v") == 1 and
                  0 < listening.get("port", 0) < 65536 and listening.get("proto") == "tcp+udp",
                  f"serve {bind}: start then listening {listening}")
            port = str(listening.get("port", 0))
            for op in ("tcp_stream", "udp_stream", "udp_rr"):
                rc, lines, raw = call("--role", "drive", "--peer", bind, "--port", port, "--op", op,
                                      "--sizes", "1024", *tiny())
                res = of(lines, "result")
                check(rc == 0 and res and res[0]["verified"] and lines[0].get("role") == "drive",
                      f"drive {op} to {bind}: {raw[-300:]!r}")
        finally:
            srv.send_signal(signal.SIGTERM)
            out, _ = srv.communicate(timeout=15)
        tail = [json.loads(x) for x in out.splitlines() if x.strip()]
        served = [x for x in tail if x.get("type") == "served"]
        check(srv.returncode == 0 and tail and tail[-1].get("type") == "end" and
              tail[-1].get("status") == "ok" and served and served[0]["sessions"] >= 3 and
              served[0]["bytes_received"] > 0 and served[0]["verify_failures"] == 0 and
              "SIGTERM" in served[0]["stopped"], f"serve {bind}: SIGTERM ends ok {tail}")

    # a deadline ends serving too
    t0 = time.time()
    rc, lines, raw = call("--role", "serve", "--serve_s", "1")
    check(rc == 0 and [x.get("type") for x in lines] == ["start", "listening", "served", "end"]
          and time.time() - t0 < 6, f"serve_s 1 ends by itself: {raw[-300:]!r}")

    # nobody serves there: an error before any start line
    s = __import__("socket").socket()
    s.bind(("127.0.0.1", 0))
    free_port = str(s.getsockname()[1])
    s.close()
    rc, lines, raw = call("--role", "drive", "--peer", "127.0.0.1", "--port", free_port)
    check(rc == 1 and len(lines) == 1 and lines[0].get("type") == "error" and
          "cannot reach the server" in lines[0].get("message", ""), f"drive to nobody: {raw!r}")

    # ---- corruption is caught: the run ends untrusted ----
    for op, size in (("tcp_stream", "65536"), ("udp_stream", "1024"), ("tcp_rr", "64")):
        rc, lines, raw = call("--op", op, "--sizes", size, *tiny(), exe=hbk_test,
                              env={"HBK_TEST_CORRUPT": "1"})
        res = of(lines, "result")
        check(rc == 4 and res and res[0]["verified"] is False and lines[-1].get("status") ==
              "untrusted", f"corrupt {op}: untrusted, exit 4: {rc} {raw[-300:]!r}")

    # ---- two hosts: serve in one network namespace, drive from another (skips unless root) ----
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    __import__("check_net_netns").run(build, check)


if __name__ == "__main__":
    counts = {"passed": 0, "failed": 0}

    def check(cond, what):
        counts["passed" if cond else "failed"] += 1
        if not cond:
            print(f"FAIL {what}", flush=True)
        return cond

    run(sys.argv[1] if len(sys.argv) > 1 else "build", check)
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)
