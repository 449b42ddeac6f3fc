"""Reference tools of two-host network jobs and `ping`: the builders against the peer (pure), the ping parser,
the serve run's reference servers (fake tools on a PATH of our own, then the real ones when installed), the
drive params that carry their ports, and the serving daemon starting and stopping them."""

import json
import shutil
import stat
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hostbench_common.experiments import RUNS
from hostbench_common.reftools import ParseError, engine, iperf3, ping, serve, sockperf, table
from hostbench_common.reftools.engine import ReferencePhase
from hostbench_common.reftools.plan import PORT, Context
from hostbench_common.reftools.serve import PeerServers
from runner_fakes import REFTOOLS, assignment, daemon_for, pids_alive

from hostbench_runner.errors import ParamError

PEER = "10.231.77.2"


def net_ctx(op, sizes=(1024,), streams=(1,), poll="blocking", duration_s=5, warmup_s=1, experiment="network",
            ports=None) -> Context:
    params = {"op": op, "sizes": list(sizes), "streams": list(streams), "poll": poll, "repeats": 1,
              "duration_s": duration_s, "warmup_s": warmup_s}
    if experiment == "network_drive":
        params.update(peer=PEER, port=40000)
    return Context(experiment=experiment, params=params, reference_ports=ports or {})


def drive_ctx(op, ports=None, **kw) -> Context:
    return net_ctx(op, experiment="network_drive", ports=ports, **kw)


# --- ping -----------------------------------------------------------------------------------------------


def test_ping_per_size_of_a_round_trip_run_with_its_payload_clamped():
    plans = ping.plans(net_ctx("udp_rr", sizes=(1, 64, 65507, 1 << 20)))
    assert [p.argv for p in plans][1] == ("ping", "-n", "-c", "20", "-i", "0.2", "-s", "64", "127.0.0.1")
    assert [p.argv[-2] for p in plans] == ["16", "64", "65507", "65507"]  # ping's own limits
    assert [p.matches for p in plans][0] == {"op": "udp_rr", "threads": 1, "block_bytes": 1}  # our row
    assert all(p.primary == "round_trips_per_s" and p.server_argv == () for p in plans)
    assert ping.plans(net_ctx("tcp_stream")) == [] and ping.plans(net_ctx("tcp_rr", streams=(2,))) == []


def test_ping_parser_leads_with_round_trips_per_second_and_microseconds():
    text = (REFTOOLS / "ping-iputils-20221126-loopback.txt").read_text()
    rate, avg_us, *rest = ping.parse_rr(text, payload_bytes=64)
    assert (rate["name"], rate["unit"]) == ("round_trips_per_s", "RT/s")
    assert rate["value"] == pytest.approx(1e6 / 34.0) and rate["rtt_avg_us"] == 34.0
    assert (avg_us["name"], avg_us["value"], avg_us["unit"]) == ("rtt_avg_us", 34.0, "µs")
    assert "ICMP echo" in rate["derived"] and "no socket stack of ours" in avg_us["measures"]
    assert rate["payload_bytes"] == 64
    assert [m["name"] for m in rest][:2] == ["loss_percent", "rtt_min"]
    assert all(m["measures"] == ping.PING_MEASURES for m in rest)


def test_ping_parser_refuses_a_run_without_reply():
    text = ("PING 10.9.9.9 (10.9.9.9) 64(92) bytes of data.\n\n--- 10.9.9.9 ping statistics ---\n"
            "20 packets transmitted, 0 received, 100% packet loss, time 3800ms\n")
    with pytest.raises(ParseError, match="no reply"):
        ping.parse_rr(text)


def test_the_tables_add_ping_to_round_trip_ops():
    ops = ("tcp_stream", "udp_stream", "tcp_rr", "udp_rr")
    loop = {op: [p.tool for p in table.plan(net_ctx(op))[0]] for op in ops}
    pair = {op: [p.tool for p in table.plan(drive_ctx(op))[0]] for op in ops}
    assert loop == {"tcp_stream": ["iperf3"], "udp_stream": ["iperf3"], "tcp_rr": ["sockperf", "ping"],
                    "udp_rr": ["sockperf", "ping"]}
    assert pair == loop


# --- builders against the peer ------------------------------------------------------------------------


def test_iperf3_against_the_peer_matches_the_loopback_run():
    ctx = drive_ctx("tcp_stream", sizes=(1024, 65536), streams=(1, 4), ports={"iperf3": 5201})
    peer, loop = iperf3.peer_plans(ctx), iperf3.plans(ctx, affinity=[0])
    assert peer[0].argv == ("iperf3", "-c", PEER, "-p", "5201", "-J", "-t", "5", "-l", "1024", "-P", "1", "-O", "1")
    assert [p.argv for p in peer] == [tuple(PEER if a == "127.0.0.1" else "5201" if a == PORT else a
                                             for a in p.argv) for p in loop]
    assert [p.matches for p in peer] == [p.matches for p in loop]
    assert all(p.server_argv == () and p.unavailable is None for p in peer)
    udp = iperf3.peer_plans(drive_ctx("udp_stream", ports={"iperf3": 5201}))[0]
    assert udp.argv[-3:] == ("-u", "-b", "0")


def test_sockperf_against_the_peer_has_no_server_of_its_own():
    p = sockperf.peer_plans(drive_ctx("udp_rr", sizes=(64,), poll="busy", ports={"sockperf": 11111}))[0]
    assert p.argv == ("sockperf", "pp", "-i", PEER, "-p", "11111", "-m", "64", "-t", "6", "--full-rtt", "--nonblocked")
    assert p.server_argv == () and p.server_proto == "udp" and p.primary == "round_trips_per_s"
    tcp = sockperf.peer_plans(drive_ctx("tcp_rr", ports={"sockperf": 11111}))[0]
    assert tcp.argv[:3] == ("sockperf", "pp", "--tcp")
    assert ping.peer_plans(drive_ctx("tcp_rr"))[0].argv[-1] == PEER


def test_a_bad_peer_never_reaches_argv():
    ctx = drive_ctx("tcp_rr")
    ctx.params["peer"] = "example.com"
    plans, broken = table.plan(ctx)
    assert plans == [] and {b["tool"] for b in broken} == {"sockperf", "ping"}
    assert all(b["status"] == "failed" for b in broken)


def test_tools_the_peer_offers_no_server_for_are_unavailable(tmp_path):
    plans = iperf3.peer_plans(drive_ctx("tcp_stream")) + sockperf.peer_plans(drive_ctx("tcp_rr"))
    phase = ReferencePhase(plans, tmp_path / "refs", time.monotonic() + 60)
    while not phase.done:
        phase.step(0.01)
    got = phase.report()
    assert [(e["tool"], e["status"]) for e in got] == [("iperf3", "unavailable"), ("sockperf", "unavailable")]
    assert got[0]["reason"].startswith("the serving host offered no iperf3 server")
    assert got[0]["argv"][4] == PORT


# --- the drive params carry the ports ------------------------------------------------------------------

DRIVE = {"op": "tcp_stream", "sizes": [1024], "streams": [1], "poll": "blocking", "repeats": 1, "duration_s": 1,
         "warmup_s": 0, "reference": True, "server_run_id": 7, "peer": PEER, "port": 40123}


def test_drive_takes_reference_ports_and_never_passes_them_to_the_kernel(net_schema):
    exp = RUNS["network_drive"]
    params = exp.kernel_params({**DRIVE, "reference_ports": {"iperf3": 5201, "sockperf": 11111}}, net_schema)
    assert "reference_ports" not in params
    assert "reference_ports" not in " ".join(exp.argv("hbk", params))
    exp.kernel_params({**DRIVE, "reference_ports": {}}, net_schema)


@pytest.mark.parametrize("ports", [{"netperf": 5201}, {"iperf3": 0}, {"iperf3": 65536}, {"iperf3": "5201"},
                                   {"iperf3": True}, [5201]])
def test_drive_refuses_bad_reference_ports(net_schema, ports):
    with pytest.raises(ParamError, match="reference_ports"):
        RUNS["network_drive"].kernel_params({**DRIVE, "reference_ports": ports}, net_schema)


# --- the serve run's reference servers, with fake tools ----------------------------------------------------

FAKE = r'''
import json, os, socket, sys, time
MODE, LOG = {mode!r}, {log!r}
args = sys.argv[1:]
with open(LOG, "a") as fh:
    fh.write(json.dumps({{"argv": sys.argv, "pid": os.getpid()}}) + "\n")
port = int(args[args.index("-p") + 1])
if MODE == "dies":
    sys.stderr.write("unable to start listener\n")
    sys.exit(1)
if MODE == "stubborn":  # ignores SIGTERM: must be killed
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", port))
s.listen(4)
while True:
    c, _ = s.accept()
    c.close()
'''


def fake_tools(tmp_path: Path, **modes: str) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for name, mode in modes.items():
        path = bindir / name
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(FAKE.format(mode=mode, log=str(bindir / "calls.jsonl"))))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return bindir


def calls(bindir: Path) -> list[dict]:
    log = bindir / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize(("op", "tool", "proto_args"), [
    ("tcp_stream", "iperf3", ["-s"]), ("udp_stream", "iperf3", ["-s"]),
    ("tcp_rr", "sockperf", ["sr", "--tcp"]),
])
def test_the_server_of_the_ops_tool_listens_on_every_address_until_stopped(tmp_path, op, tool, proto_args):
    bindir = fake_tools(tmp_path, iperf3="ok", sockperf="ok")
    servers = PeerServers(op, tmp_path / "servers", path=str(bindir))
    servers.start()
    assert list(servers.ports) == [tool] and servers.unavailable == {}
    (call,) = calls(bindir)
    argv = call["argv"]
    assert argv[0] == str(bindir / tool) and argv[1:1 + len(proto_args)] == proto_args
    assert "-1" not in argv  # the driver runs several clients
    assert argv[argv.index("-p") + 1] == str(servers.ports[tool]) and "0.0.0.0" in argv
    assert engine.port_ready(servers.ports[tool], "tcp") is True
    servers.stop()
    assert pids_alive([call["pid"]]) == [] and not (tmp_path / "servers").exists()
    servers.stop()  # idempotent


def test_a_missing_or_failing_server_is_not_offered(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    servers = PeerServers("tcp_rr", tmp_path / "servers", path=str(empty))
    servers.start()
    assert servers.ports == {} and servers.unavailable == {"sockperf": "sockperf is not installed on this host (Debian: apt install sockperf)"}
    bindir = fake_tools(tmp_path, iperf3="dies")
    servers = PeerServers("tcp_stream", tmp_path / "servers", path=str(bindir))
    servers.start()
    assert servers.ports == {}
    assert servers.unavailable["iperf3"].startswith("iperf3 server exited before listening (exit code 1)")
    assert "unable to start listener" in servers.unavailable["iperf3"]
    servers.stop()


def test_a_server_that_ignores_sigterm_is_killed_and_reaped(tmp_path, monkeypatch):
    monkeypatch.setattr(serve, "KILL_GRACE_S", 0.3)
    bindir = fake_tools(tmp_path, iperf3="stubborn")
    servers = PeerServers("tcp_stream", tmp_path / "servers", path=str(bindir))
    servers.start()
    assert "iperf3" in servers.ports
    servers.stop()
    assert pids_alive([c["pid"] for c in calls(bindir)]) == []


# --- the serving daemon: servers from `listening` to the end of the run, however it ends --------------------

SERVE_SCHEMA_PARAMS = {"op": "tcp_stream", "reference": True}


@pytest.mark.parametrize("ending", ["lease-409", "shutdown"])
def test_the_serving_daemon_offers_servers_and_stops_them_when_the_run_ends(server, settings_for, tmp_path,
                                                                            monkeypatch, ending, real_hbk):
    bindir = fake_tools(tmp_path, iperf3="ok")
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    settings = settings_for(server.url, real_hbk)
    with daemon_for(settings) as d:
        def end_it() -> None:
            assert server.wait_for(lambda: server.listenings, timeout_s=20)
            if ending == "lease-409":
                server.lease_status = 409
            else:
                d.shutdown.set()

        t = threading.Thread(target=end_it, daemon=True)
        t.start()
        d.execute(assignment(run_id=3, experiment="network_serve", params=dict(SERVE_SCHEMA_PARAMS), deadline_s=60))
        t.join(5)
    (run_id, body), = server.listenings
    (call,) = calls(bindir)
    port = int(call["argv"][call["argv"].index("-p") + 1])
    assert run_id == "3" and body["reference_ports"] == {"iperf3": port} and body["port"] != port
    assert pids_alive([call["pid"]]) == []
    assert not any(settings.work_dir.iterdir())


def test_a_serve_run_without_references_offers_no_server(server, settings_for, tmp_path, monkeypatch, real_hbk):
    bindir = fake_tools(tmp_path, iperf3="ok")
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    server.lease_status = 200
    with daemon_for(settings_for(server.url, real_hbk)) as d:
        threading.Thread(target=lambda: server.wait_for(lambda: server.listenings, 20)
                         and setattr(server, "lease_status", 409), daemon=True).start()
        d.execute(assignment(run_id=4, experiment="network_serve", params={"op": "tcp_stream"}, deadline_s=60))
    (_, body), = server.listenings
    assert "reference_ports" not in body and calls(bindir) == []


# --- real tools, when they are here ---------------------------------------------------------------------------


def _run(plans, tmp_path):
    phase = ReferencePhase(plans, tmp_path / "refs", time.monotonic() + 60)
    limit = time.monotonic() + 40
    while not phase.done and time.monotonic() < limit:
        phase.step(0.05)
    phase.close()
    return phase.report()


@pytest.mark.skipif(shutil.which("ping") is None, reason="ping (iputils-ping) is not installed")
def test_real_ping_on_loopback(tmp_path):
    got = _run(ping.plans(net_ctx("tcp_rr", sizes=(64,))), tmp_path)[0]
    assert got["status"] == "ok", got["reason"]
    rate, avg_us = got["metrics"][:2]
    assert rate["primary"] is True and rate["value"] > 0 and avg_us["unit"] == "µs" and avg_us["value"] > 0


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_real_iperf3_against_a_peer_server(tmp_path):
    servers = PeerServers("tcp_stream", tmp_path / "servers")
    servers.start()
    try:
        ctx = drive_ctx("tcp_stream", sizes=(16384,), streams=(1, 2), duration_s=1, warmup_s=0,
                        ports=servers.ports)
        ctx.params["peer"] = "127.0.0.1"
        got = _run(iperf3.peer_plans(ctx), tmp_path)  # two clients, one after the other, on one server
    finally:
        pids = servers.pids()
        servers.stop()
    assert [e["status"] for e in got] == ["ok", "ok"], [e["reason"] for e in got]
    assert all(e["metrics"][0]["name"] == "received_mbps" and e["metrics"][0]["value"] > 0 for e in got)
    assert pids_alive(pids) == []
