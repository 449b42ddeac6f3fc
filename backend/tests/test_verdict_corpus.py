"""The verdict corpus across CPU, memory, disk and network: bad or disturbed results, none of which may be shown
"valid" (issue 26). Every case goes through the runner API as a real runner's finish would and is read back
through GET /api/runs/{id}; each names the flag it must carry.

Most are real measurements: the real kernels run here beside busy processes, on tmpfs, through a warm page
cache, over loopback, and between two network namespaces on this machine (a second "host" on the same machine),
over a tc-shaped link or to a receiver starved of CPU (a busy peer). Where namespaces cannot be made (not root,
no `ip`/`tc`), those cases are skipped and say so; the rest are results as real runs reported them (the issue's
trial: loopback TCP spreading 7,237-21,955 Mbit/s, UDP with 22.3 % loss, 1,808 MB/s buffered 4 KiB reads at
0.68 us) or the minimal result that carries one defect. Controls must stay valid, so the checks can fail.
"""
import copy

import pytest
from sqlalchemy import update

from app.hosts.models import Host
from app.hosts.service import create_registration_token
from app.jobs import dispatch
from tests import corpus_kernels as ck
from tests.conftest import ZEN4_INVENTORY
from tests.test_verdicts import _res, _run, _trace_samples

ONE = {"threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}
TWO = {"threads": [1], "repeats": 2, "duration_s": 1, "warmup_s": 0}
NET_KINFO = {"type": "start", "kernel": "net", "affinity_cpus": [0, 1]}
DISK_DIRECT = {"type": "start", "kernel": "disk", "direct": True, "cold_cache": False, "rotational": False,
               "memory_backed": False, "affinity_cpus": [0, 1]}
DISK_PARAMS = {"ops": ["seq_read"], "blocks": [4096], "threads": [1], "repeats": 2, "duration_s": 1, "warmup_s": 0,
               "file_size": 16777216}


def _net(value, repeat=1, op="tcp_stream", size=65536, wait=0.01, **kw):
    return {"threads": 1, "repeat": repeat, "value": value, "unit": "RT/s" if op.endswith("_rr") else "Mbit/s",
            "verified": True, "oversubscribed": False, "cpu_share": 0.3, "wait_share": wait, "op": op,
            "block_bytes": size, **kw}


def _disk(value, repeat=1, op="seq_read", p50=60.0, wait=0.01):
    return {"threads": 1, "repeat": repeat, "value": value, "unit": "MB/s", "verified": True, "oversubscribed": False,
            "cpu_share": 0.2, "wait_share": wait, "op": op, "block_bytes": 4096, "lat_p50_us": p50,
            "lat_p99_us": p50 * 3, "iops": value * 1e6 / 4096}


def _register(client, session, name, inventory):
    token, _ = create_registration_token(session)
    r = client.post("/api/runners/register", json={"registration_token": token, "name": name,
                                                   "hostname": f"{name}.local", "version": "0",
                                                   "inventory": inventory, "labels": {}})
    assert r.status_code == 201, r.text
    body = r.json()
    return body["host_id"], {"Authorization": f"Bearer {body['runner_token']}"}


def _pair_run(client, session, params, kernel_info, results, server_inv, driver_inv,
              addresses=("10.0.0.1", "10.0.0.2")):
    """A network_pair job between two registered hosts (at these addresses), its drive run finished with these
    results."""
    _pair_run.n += 1  # type: ignore[attr-defined]
    server = _register(client, session, f"srv{_pair_run.n}", server_inv)  # type: ignore[attr-defined]
    driver = _register(client, session, f"drv{_pair_run.n}", driver_inv)  # type: ignore[attr-defined]
    for (host_id, _), address in zip((server, driver), addresses, strict=True):
        session.execute(update(Host).where(Host.id == host_id).values(address=address))
    session.commit()
    r = client.post("/api/jobs", json={"host_ids": [server[0], driver[0]], "experiment": "network_pair",
                                       "params": params})
    assert r.status_code == 201, r.text
    serve, drive = r.json()["runs"]
    dispatch.dispatch_host(session, server[0])
    a = client.get("/api/runner/work?wait_s=0", headers=server[1]).json()
    assert client.post(f"/api/runner/runs/{serve['id']}/listening", json={"attempt": a["attempt"], "port": 40001},
                       headers=server[1]).status_code == 200
    dispatch.dispatch_host(session, driver[0])
    assert client.get("/api/runner/work?wait_s=0", headers=driver[1]).status_code == 200
    assert client.post(f"/api/runner/runs/{drive['id']}/start", json={"attempt": 1, "kernel_info": kernel_info},
                       headers=driver[1]).status_code == 200
    r = client.post(f"/api/runner/runs/{drive['id']}/finish", headers=driver[1],
                    json={"attempt": 1, "status": "succeeded", "results": results})
    assert r.status_code == 200, r.text
    return drive["id"]


_pair_run.n = 0  # type: ignore[attr-defined]


def _inventory(boot_id: str | None, machine_id: str | None = None) -> dict:
    inv = copy.deepcopy(ZEN4_INVENTORY)
    inv["os"] = {"boot_id": boot_id, "machine_id": machine_id}
    return inv


def _this_machine() -> dict:
    """This machine's identity as its runner's inventory reports it (the real collector)."""
    from pathlib import Path

    from hostbench_runner.inventory import os_info

    inv = copy.deepcopy(ZEN4_INVENTORY)
    inv["os"] = os_info.parse(os_info.read(Path("/")))
    return inv


def _kinds(res):
    kinds = {f["kind"] for f in res["flags"]} | {f["kind"] for row in res["rows"] for f in row["flags"]}
    if res.get("trace"):
        kinds |= {f["kind"] for f in res["trace"]["flags"]}
    return kinds


# The table this test prints and checks: case -> (area, how it was made, the flag it must carry).
CORPUS: dict[str, tuple[str, str, str]] = {}


def test_corpus_across_cpu_memory_disk_network_has_no_valid(client, session, runner, capsys):
    ck.need_kernel()
    cases: dict[str, tuple[int, str]] = {}

    def case(name, area, how, kind, run_id):
        CORPUS[name] = (area, how, kind)
        cases[name] = (run_id, kind)

    def api(name, area, how, kind, **kw):
        run_id, r = _run(client, session, runner, **kw)
        assert r.status_code == 200, (name, r.text)
        case(name, area, how, kind, run_id)

    # --- CPU ----------------------------------------------------------------------------------------------
    with ck.hogs(2):
        start, res = ck.kernel("cpu", "--op", "fp64", "--threads", "2", "--repeats", "2", "--duration_s", "0.5",
                               "--warmup_s", "0")
    api("cpu_hog_beside_kernel", "cpu", "real: 2 busy processes beside the CPU kernel", "disturbed",
        params={**TWO, "threads": [2]}, kernel_info=start, results=res)
    start, res = ck.kernel("cpu", "--op", "fp64", "--threads", "4", "--repeats", "1", "--duration_s", "0.5",
                           "--warmup_s", "0")
    if start.get("affinity_cpus") and len(start["affinity_cpus"]) < 4:
        api("cpu_oversubscribed", "cpu", "real: 4 threads on this host's CPUs", "oversubscribed",
            params={**ONE, "threads": [4]}, kernel_info=start, results=res)
    else:  # a host with 4 or more CPUs: the same on a 2-CPU mask, as the guest reported it
        api("cpu_oversubscribed", "cpu", "4 threads on 2 CPUs (the issue's guest)", "oversubscribed",
            params={**ONE, "threads": [4]}, results=[_res(36.17, threads=4, share=0.49, oversubscribed=True)])
    api("cpu_unstable", "cpu", "repeats 40 / 55 / 30 GFLOP/s at full CPU share", "unstable",
        params={**ONE, "repeats": 3}, results=[_res(40.0), _res(55.0, repeat=2), _res(30.0, repeat=3)])
    api("cpu_above_peak", "cpu", "90 GFLOP/s on one Zen 4 core (peak 58.4)", "above_peak", results=[_res(90.0)])
    api("cpu_unverified", "cpu", "a chunk failed its closed-form check", "unverified",
        results=[_res(50.0, verified=False, reason="chunk 3: x != x0 + n*c")])
    lost = [100.0] * 40 + [50.0] * 40 + [100.0] * 40
    api("cpu_trace_lost", "cpu", "a trace halving for 40 s at CPU share 0.70", "cpu_lost", experiment="cpu_trace",
        params={"threads": 1, "duration_s": 120}, results=[_res(50.0, share=0.70)], samples=_trace_samples(lost))
    api("cpu_trace_throttled", "cpu", "the same trace at CPU share 0.99", "throttled", experiment="cpu_trace",
        params={"threads": 1, "duration_s": 120}, results=[_res(50.0, share=0.99)], samples=_trace_samples(lost))

    # --- memory -------------------------------------------------------------------------------------------
    mem = {"op": "copy", "threads": [1], "repeats": 2, "duration_s": 0.5, "warmup_s": 0}
    with ck.hogs(2):
        start, res = ck.kernel("memory", "--op", "copy", "--threads", "1", "--repeats", "2", "--duration_s", "0.5",
                               "--warmup_s", "0")
    api("memory_hog_beside_kernel", "memory", "real: 2 busy processes beside the memory kernel", "disturbed",
        experiment="memory", params=mem, kernel_info=start, results=res)
    start, res = ck.kernel("memory", "--op", "copy", "--threads", "3", "--repeats", "1", "--duration_s", "0.5",
                           "--warmup_s", "0")
    if start.get("affinity_cpus") and len(start["affinity_cpus"]) < 3:
        api("memory_oversubscribed", "memory", "real: 3 threads on this host's CPUs", "oversubscribed",
            experiment="memory", params={**mem, "threads": [3], "repeats": 1}, kernel_info=start, results=res)
    lat = {"op": "latency", "sizes": [64 * 2**20], "threads": [1], "repeats": 1, "duration_s": 1, "warmup_s": 0}
    api("memory_below_floor", "memory", "a dependent load in 0.11 ns", "below_floor", experiment="memory",
        params=lat, kernel_info={"type": "start", "kernel": "memory", "affinity_cpus": [0, 1]},
        results=[{"threads": 1, "repeat": 1, "value": 9000.0, "unit": "Mload/s", "verified": True, "op": "latency",
                  "block_bytes": 64 * 2**20, "ns_per_load": 0.11, "cpu_share": 0.99, "oversubscribed": False}])

    # --- disk ---------------------------------------------------------------------------------------------
    disk_args = ("--op", "seq_read", "--blocks", "4096", "--file_size", "16777216", "--threads", "1", "--repeats",
                 "2", "--duration_s", "0.5", "--warmup_s", "0")
    start, res = ck.kernel("disk", *disk_args, "--workdir", "/dev/shm")
    api("disk_on_tmpfs", "disk", "real: the disk kernel's file on tmpfs", "page_cache", experiment="disk",
        params=DISK_PARAMS, kernel_info=start, results=res)
    import tempfile
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        start, res = ck.kernel("disk", *disk_args, "--direct", "false", "--cold_cache", "false", "--workdir", d)
    api("disk_warm_page_cache", "disk", "real: buffered reads with a warm cache", "page_cache", experiment="disk",
        params=DISK_PARAMS, kernel_info=start, results=res)
    buffered = {**DISK_DIRECT, "direct": False, "cold_cache": True}
    api("disk_readahead_reads", "disk", "buffered 4 KiB reads: 1,808 MB/s at p50 0.68 µs (the issue's trial)",
        "page_cache", experiment="disk", params=DISK_PARAMS, kernel_info=buffered,
        results=[_disk(1808.0, p50=0.68), _disk(1790.0, repeat=2, p50=0.69)])
    api("disk_buffered_writes", "disk", "buffered 1 MiB writes: 5,976 MB/s (the issue's trial)", "page_cache",
        experiment="disk", params={**DISK_PARAMS, "ops": ["seq_write"]}, kernel_info=buffered,
        results=[_disk(5976.0, op="seq_write", p50=150.0), _disk(5900.0, repeat=2, op="seq_write", p50=150.0)])
    api("disk_above_bus", "disk", "direct reads at 40,000 MB/s from one drive", "implausible", experiment="disk",
        params=DISK_PARAMS, kernel_info=DISK_DIRECT, results=[_disk(40000.0), _disk(40100.0, repeat=2)])
    api("disk_direct_sub_us", "disk", "direct reads at p50 0.5 µs", "below_floor", experiment="disk",
        params={**DISK_PARAMS, "direct": True}, kernel_info=DISK_DIRECT,
        results=[_disk(75.0, p50=0.5), _disk(75.5, repeat=2, p50=0.5)])
    api("disk_run_queue_wait", "disk", "direct reads whose thread waited for a CPU 40 % of the phase", "disturbed",
        experiment="disk", params={**DISK_PARAMS, "direct": True}, kernel_info=DISK_DIRECT,
        results=[_disk(70.0, wait=0.40), _disk(75.0, repeat=2)])
    api("disk_unstable", "disk", "direct reads at 75 and 40 MB/s", "unstable", experiment="disk",
        params={**DISK_PARAMS, "direct": True}, kernel_info=DISK_DIRECT, results=[_disk(75.0), _disk(40.0, repeat=2)])
    api("disk_cpu_quota", "disk", "4 KiB writes at 1.3 MB/s, its cgroup's CPU quota throttling 45 % of the phase "
        "(the 8-host fault run's quota host)", "cpu_bound", experiment="disk",
        params={**DISK_PARAMS, "ops": ["seq_write"], "direct": True}, kernel_info={**DISK_DIRECT, "cpu_quota": 0.5},
        results=[{**_disk(1.3, op="seq_write", p50=90.0), "throttled_share": 0.45},
                 {**_disk(1.4, repeat=2, op="seq_write", p50=88.0), "throttled_share": 0.43}])

    # --- network ------------------------------------------------------------------------------------------
    net = {"op": "tcp_stream", "sizes": [65536], "repeats": 2, "duration_s": 0.5, "warmup_s": 0}
    start, res = ck.kernel("net", "--role", "loopback", "--op", "tcp_stream", "--sizes", "65536", "--repeats", "2",
                           "--duration_s", "0.5", "--warmup_s", "0")
    api("net_loopback", "network", "real: TCP over loopback", "loopback", experiment="network", params=net,
        kernel_info=start, results=res)
    with ck.hogs(2):
        start, res = ck.kernel("net", "--role", "loopback", "--op", "tcp_rr", "--sizes", "1", "--repeats", "2",
                               "--duration_s", "0.5", "--warmup_s", "0")
    api("net_hog_beside_kernel", "network", "real: TCP round trips beside 2 busy processes", "disturbed",
        experiment="network", params={**net, "op": "tcp_rr", "sizes": [1]}, kernel_info=start, results=res)
    spread = [7237.0, 12425.0, 16186.0, 21955.0]
    api("net_loopback_spread", "network", "loopback TCP 7,237-21,955 Mbit/s (the issue's trial)", "unstable",
        experiment="network", params={**net, "repeats": 4}, kernel_info=NET_KINFO,
        results=[_net(v, repeat=i + 1) for i, v in enumerate(spread)])
    api("net_udp_lossy", "network", "UDP with 22.3 % loss (the issue's trial)", "lossy", experiment="network",
        params={**net, "op": "udp_stream", "sizes": [1024]}, kernel_info=NET_KINFO,
        results=[_net(900.0, op="udp_stream", size=1024, loss_pct=22.3),
                 _net(910.0, repeat=2, op="udp_stream", size=1024, loss_pct=21.0)])
    api("net_udp_rr_lost", "network", "UDP round trips, 300 of 10,000 without a reply", "lossy", experiment="network",
        params={**net, "op": "udp_rr", "sizes": [1]}, kernel_info=NET_KINFO,
        results=[_net(20000.0, op="udp_rr", size=1, round_trips=9700, lost=300),
                 _net(20100.0, repeat=2, op="udp_rr", size=1, round_trips=10000, lost=0)])
    pair = {"op": "tcp_stream", "sizes": [65536], "repeats": 2, "duration_s": 1, "warmup_s": 0}
    quiet = [_net(9400.0), _net(9410.0, repeat=2)]
    one_boot = _pair_run(client, session, pair, NET_KINFO, quiet, _inventory("b00t"), _inventory("b00t"))
    case("net_pair_same_boot_id", "network", "two hosts reporting one running kernel (containers)", "same_machine",
         one_boot)
    one_install = _pair_run(client, session, pair, NET_KINFO, quiet, _inventory("b1", "m"), _inventory("b2", "m"))
    case("net_pair_same_machine_id", "network", "two hosts reporting one machine id", "same_machine", one_install)
    one_address = _pair_run(client, session, pair, NET_KINFO, quiet, _inventory(None), _inventory(None),
                            ("10.0.0.7", "10.0.0.7"))
    case("net_pair_same_address", "network", "two hosts at one address", "same_machine", one_address)
    control_pair = _pair_run(client, session, pair, NET_KINFO, quiet, _inventory("b1", "m1"), _inventory("b2", "m2"))
    # the same pair whose receiver reported its run-queue wait (a kernel that carries it in its report)
    quiet_peer = [_net(9400.0, peer_wait_share=0.02), _net(9410.0, repeat=2, peer_wait_share=0.03)]
    peer_checked = _pair_run(client, session, pair, NET_KINFO, quiet_peer, _inventory("b3", "m3"),
                             _inventory("b4", "m4"))

    netns = ck.netns_possible()
    if netns:
        here = _this_machine()
        with ck.NetnsPair() as ns:
            # a busy peer: the receiver shares its CPU with a busy process at nice 19 and drops what it cannot take
            with ck.hogs(1, cpu=0), ns.server("udp_stream", nice=19, cpu=0) as port:
                start, res = ns.drive(port, "--op", "udp_stream", "--sizes", "1024", "--repeats", "2",
                                      "--duration_s", "0.5", "--warmup_s", "0", cpu=1)
            run_id = _pair_run(client, session, {**pair, "op": "udp_stream", "sizes": [1024]}, start, res, here,
                               here)
            # the receiver drops what it cannot take (lossy); when other work on this machine starves the
            # sender too, it sends less and the run is disturbed instead: either way never valid
            case("net_busy_peer_udp", "network", "real: UDP to a receiver starved by a busy process (netns pair)",
                 "lossy|disturbed", run_id)
            # a busy peer the driver cannot see: the receiving side (niced, on CPU 0 with 2 busy processes)
            # waits in its run queue while the driver (CPU 1) does not; the receiver's own report says so
            with ck.hogs(2, cpu=0), ns.server("tcp_stream", nice=19, cpu=0) as port:
                start, res = ns.drive(port, "--op", "tcp_stream", "--sizes", "65536", "--repeats", "2",
                                      "--duration_s", "0.5", "--warmup_s", "0", cpu=1)
            busy_peer = _pair_run(client, session, pair, start, res, here, here)
            case("net_busy_peer_tcp", "network", "real: TCP to a receiver starved by 2 busy processes on its CPU "
                 "(netns pair)", "disturbed", busy_peer)
            # the same for UDP round trips: nothing lost, the driver quiet, the echoing side waited
            with ck.hogs(2, cpu=0), ns.server("udp_rr", nice=19, cpu=0) as port:
                start, res = ns.drive(port, "--op", "udp_rr", "--sizes", "64", "--repeats", "2",
                                      "--duration_s", "0.5", "--warmup_s", "0", cpu=1)
            busy_rr = _pair_run(client, session, {**pair, "op": "udp_rr", "sizes": [64]}, start, res, here, here)
            case("net_busy_peer_udp_rr", "network", "real: UDP round trips to an echo starved by 2 busy processes "
                 "(netns pair)", "disturbed", busy_rr)
            # and TCP round trips: the echoing side reports its wait when the driver shuts its side
            with ck.hogs(2, cpu=0), ns.server("tcp_rr", nice=19, cpu=0) as port:
                start, res = ns.drive(port, "--op", "tcp_rr", "--sizes", "64", "--repeats", "2",
                                      "--duration_s", "0.5", "--warmup_s", "0", cpu=1)
            busy_tcp_rr = _pair_run(client, session, {**pair, "op": "tcp_rr", "sizes": [64]}, start, res, here,
                                    here)
            case("net_busy_peer_tcp_rr", "network", "real: TCP round trips to an echo starved by 2 busy processes "
                 "(netns pair)", "disturbed", busy_tcp_rr)
            ns.shape("20mbit")
            with ns.server("tcp_stream") as port:
                start, res = ns.drive(port, "--op", "tcp_stream", "--sizes", "65536", "--repeats", "2",
                                      "--duration_s", "0.5", "--warmup_s", "0")
            run_id = _pair_run(client, session, pair, start, res, here, here)
            case("net_shaped_link_same_machine", "network",
                 "real: TCP over a tc-shaped (tbf 20 Mbit/s) veth between two namespaces", "same_machine", run_id)
    control_id, r = _run(client, session, runner, results=[_res(55.0, share=0.995)])
    assert r.status_code == 200

    shown = {}
    for name, (run_id, kind) in cases.items():
        res = client.get(f"/api/runs/{run_id}").json()["result"]
        assert res is not None, name
        assert set(kind.split("|")) & _kinds(res), (name, kind, _kinds(res), res)
        assert all(f["text"].strip() for row in res["rows"] for f in row["flags"])
        shown[name] = res["verdict"]
    with capsys.disabled():
        print(f"\nverdict corpus ({len(shown)} cases; namespaces {'used' if netns else 'not available: skipped'}):")
        for name, verdict in shown.items():
            area, how, kind = CORPUS[name]
            print(f"  {area:8} {name:30} {kind:15} -> {verdict:15} {how}")
    assert len(shown) >= 20, len(shown)
    assert {CORPUS[n][0] for n in shown} == {"cpu", "memory", "disk", "network"}
    assert [n for n, v in shown.items() if v == "valid"] == []
    control = client.get(f"/api/runs/{control_id}").json()["result"]
    assert control["verdict"] == "valid" and control["rows"][0]["flags"] == []
    other = client.get(f"/api/runs/{control_pair}").json()["result"]
    assert other["verdict"] == "valid" and other["pair"]["same_machine"] is False, other
    assert any(c.startswith("the peer is another machine") for c in other["checked"]), other["checked"]
    assert any(c.startswith("the peer's CPU: not checked") for c in other["checked"]), other  # said, not implied
    checked = client.get(f"/api/runs/{peer_checked}").json()["result"]
    assert checked["verdict"] == "valid", checked
    assert "the peer's CPU: run-queue wait of its receiving threads ≤ 10% in every repeat" in checked["checked"]
    loop = client.get(f"/api/runs/{cases['net_loopback'][0]}").json()["result"]["checked"]
    assert "loopback: no NIC measured" in loop and not any("peer" in c for c in loop), loop
    if netns:
        for run_id in (busy_peer, busy_rr, busy_tcp_rr):
            res = client.get(f"/api/runs/{run_id}").json()["result"]
            peer = [f for row in res["rows"] for f in row["flags"]
                    if f["kind"] == "disturbed" and "the peer" in f["text"]]
            assert peer and peer[0]["value"] > 0.10, res  # named: the serving side waited, the driver may not have
            assert any(c.startswith("the peer's CPU: run-queue wait") for c in res["checked"]), res["checked"]
    if not netns:
        pytest.skip("corpus held (0 valid); the network-namespace cases need root, ip and tc")
