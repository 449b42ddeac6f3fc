#!/usr/bin/env python3
"""Two hosts on one machine: the net kernel serves in one network namespace and drives from
another, over a veth pair with addresses in 10.0.0.0/8 (and fd00::/8) that exist only inside
the two namespaces this script creates and always deletes. Skipped, with the reason printed,
when not root, when `ip` is missing, or when namespaces cannot be made here (a container).
Standalone: python3 tests/check_net_netns.py build"""

import json
import os
import shutil
import signal
import subprocess
import sys

A_V4, B_V4 = "10.0.0.1", "10.0.0.2"
A_V6, B_V6 = "fd00:0:0:1::1", "fd00:0:0:1::2"


def skip_reason():
    if os.geteuid() != 0:
        return "not root (ip netns needs CAP_SYS_ADMIN)"
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is missing"
    return None


def ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


def run(build, check):
    why = skip_reason()
    if why:
        print(f"skip check_net_netns: {why}", flush=True)
        return
    hbk = os.path.abspath(os.path.join(build, "hbk"))
    tag = str(os.getpid() % 100000)
    ns_a, ns_b = f"hbA{tag}", f"hbB{tag}"
    veth_a, veth_b = f"hbvA{tag}", f"hbvB{tag}"
    try:
        steps = [
            ("netns", "add", ns_a), ("netns", "add", ns_b),
            ("link", "add", veth_a, "type", "veth", "peer", "name", veth_b),
            ("link", "set", veth_a, "netns", ns_a), ("link", "set", veth_b, "netns", ns_b),
            ("-n", ns_a, "addr", "add", f"{A_V4}/24", "dev", veth_a),
            ("-n", ns_b, "addr", "add", f"{B_V4}/24", "dev", veth_b),
            ("-n", ns_a, "addr", "add", f"{A_V6}/64", "dev", veth_a, "nodad"),
            ("-n", ns_b, "addr", "add", f"{B_V6}/64", "dev", veth_b, "nodad"),
            ("-n", ns_a, "link", "set", veth_a, "up"), ("-n", ns_b, "link", "set", veth_b, "up"),
            ("-n", ns_a, "link", "set", "lo", "up"), ("-n", ns_b, "link", "set", "lo", "up"),
        ]
        for s in steps:
            r = ip(*s)
            if r.returncode != 0:
                if s[:2] == ("netns", "add") and s[2] == ns_a:
                    print(f"skip check_net_netns: cannot create a network namespace here: "
                          f"{r.stderr.strip()}", flush=True)
                    return
                check(False, f"netns setup: ip {' '.join(s)}: {r.stderr.strip()}")
                return
        for bind, peer in ((A_V4, A_V4), (A_V6, A_V6)):
            serve_and_drive(hbk, ns_a, ns_b, bind, peer, check)
        # the driver cannot reach a host name, nor a namespace it has no route to
        r = subprocess.run(["ip", "netns", "exec", ns_b, hbk, "net", "--role", "drive", "--peer",
                            "10.0.0.99", "--port", "5201", "--duration_s", "0.3"],
                           capture_output=True, text=True, timeout=30)
        last = json.loads(r.stdout.splitlines()[-1]) if r.stdout.strip() else {}
        check(r.returncode == 1 and last.get("type") == "error" and
              "cannot reach the server" in last.get("message", ""),
              f"netns: drive to an address nobody has: {r.stdout!r}")
    finally:
        ip("netns", "del", ns_a)
        ip("netns", "del", ns_b)
        check(ns_a not in ip("netns", "list").stdout and ns_b not in ip("netns", "list").stdout,
              "netns: both namespaces removed")


def serve_and_drive(hbk, ns_a, ns_b, bind, peer, check):
    srv = subprocess.Popen(["ip", "netns", "exec", ns_a, hbk, "net", "--role", "serve", "--bind",
                            bind, "--serve_s", "60"], stdout=subprocess.PIPE, text=True)
    try:
        start = json.loads(srv.stdout.readline() or "{}")
        listening = json.loads(srv.stdout.readline() or "{}")
        check(start.get("role") == "serve" and listening.get("type") == "listening",
              f"netns serve on {bind}: listening {listening}")
        port = str(listening.get("port", 0))
        for op, size, streams in (("tcp_stream", "65536", "2"), ("udp_stream", "32768", "1"),
                                  ("tcp_rr", "64", "1"), ("udp_rr", "64", "1")):
            r = subprocess.run(["ip", "netns", "exec", ns_b, hbk, "net", "--role", "drive",
                                "--peer", peer, "--port", port, "--op", op, "--sizes", size,
                                "--streams", streams, "--duration_s", "0.5", "--repeats", "1",
                                "--warmup_s", "0"], capture_output=True, text=True, timeout=60)
            lines = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
            res = [x for x in lines if x.get("type") == "result"]
            ok = r.returncode == 0 and len(res) == 1 and res[0]["verified"] and res[0]["value"] > 0
            if ok and op == "tcp_stream":
                ok = res[0]["receiver_bytes"] == res[0]["sender_bytes"] > 0
            if ok and op == "udp_stream":
                ok = 0 < res[0]["datagrams_received"] <= res[0]["datagrams_sent"]
            if ok and op.endswith("_rr"):
                ok = res[0]["latency_us"]["p50"] > 0
            check(ok and lines[0].get("peer") == peer,
                  f"netns drive {op} {ns_b} -> {peer}: {r.stdout[-400:]!r} {r.stderr[-200:]!r}")
            if ok:
                r0 = res[0]
                extra = (f"loss {r0['loss_pct']:.2f} %" if op == "udp_stream" else
                         f"p50 {r0['latency_us']['p50']:.1f} us" if op.endswith("_rr") else "")
                print(f"netns {op} -> {peer}: {r0['value']:.1f} {r0['unit']} {extra}", flush=True)
    finally:
        srv.send_signal(signal.SIGTERM)  # ip netns exec passes it on (it execs the kernel)
        out, _ = srv.communicate(timeout=20)
    tail = [json.loads(x) for x in out.splitlines() if x.strip()]
    served = [x for x in tail if x.get("type") == "served"]
    check(srv.returncode == 0 and served and served[0]["sessions"] >= 4 and
          served[0]["verify_failures"] == 0 and tail[-1].get("status") == "ok",
          f"netns serve on {bind}: served and ended ok {tail}")


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
