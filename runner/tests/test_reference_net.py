"""Network (iperf3, sockperf) and IOzone references: the argv builders and their matching (pure), the
parsers that add our kernel's unit, a plan's own server (fake tools on a PATH of our own), and one
real run of each tool when it is installed here."""

import json
import shutil
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hostbench_common.reftools import ParseError, engine, iozone, iperf3, sockperf, table
from hostbench_common.reftools._net import NET_MARGIN_S
from hostbench_common.reftools.engine import ReferencePhase
from hostbench_common.reftools.plan import PORT, Context
from runner_fakes import REFTOOLS, pids_alive


def net_ctx(op, sizes=(1024,), streams=(1,), poll="blocking", duration_s=5, warmup_s=1) -> Context:
    return Context(experiment="network", params={"op": op, "sizes": list(sizes), "streams": list(streams),
                                                 "poll": poll, "repeats": 1, "duration_s": duration_s,
                                                 "warmup_s": warmup_s})


# --- iperf3 builder ------------------------------------------------------------------------------------


def test_iperf3_plans_one_run_per_size_and_streams_with_its_own_server():
    plans = iperf3.plans(net_ctx("tcp_stream", sizes=(1024, 131072), streams=(1, 4)), affinity=[0, 1, 2])
    assert [(p.matches["block_bytes"], p.matches["threads"]) for p in plans] == [
        (1024, 1), (1024, 4), (131072, 1), (131072, 4)]
    one, four = plans[0], plans[1]
    assert one.argv == ("iperf3", "-c", "127.0.0.1", "-p", PORT, "-J", "-t", "5", "-l", "1024", "-P", "1",
                        "-O", "1", "-A", "0,1")
    assert four.argv[-3:] == ("4", "-O", "1")  # several streams: not pinned
    assert one.server_argv == ("iperf3", "-s", "-1", "-p", PORT, "-B", "127.0.0.1") and one.server_proto == "tcp"
    assert one.matches == {"op": "tcp_stream", "threads": 1, "block_bytes": 1024}
    assert one.primary == "received_mbps" and one.parser is iperf3.parse_received_mbps
    assert one.timeout_s == 5 + 1 + NET_MARGIN_S


def test_iperf3_udp_no_omit_and_no_size_beyond_a_datagram():
    plans = iperf3.plans(net_ctx("udp_stream", sizes=(1, 65507, 65508, 1 << 20), duration_s=0.5),
                             affinity=[5])
    assert [p.matches["block_bytes"] for p in plans] == [1, 65507]
    assert plans[0].argv == ("iperf3", "-c", "127.0.0.1", "-p", PORT, "-J", "-t", "1", "-l", "1", "-P", "1",
                             "-u", "-b", "0")  # whole seconds, no -O, one CPU: nothing to pin apart
    # below iperf3's smallest datagram the row says why there is no iperf3 figure (iperf3 would exit 1)
    assert plans[0].unavailable is not None and "16 B or more" in plans[0].unavailable
    assert plans[1].unavailable is None
    tcp = iperf3.plans(net_ctx("tcp_stream", sizes=(1,)), affinity=[5])
    assert tcp[0].unavailable is None  # TCP writes of 1 B are fine
    assert iperf3.plans(net_ctx("tcp_rr")) == []


# --- sockperf builder ----------------------------------------------------------------------------------


def test_sockperf_ping_pong_pinned_full_rtt():
    plans = sockperf.plans(net_ctx("tcp_rr", sizes=(1, 14, 64, 65507, 65508), warmup_s=0.5),
                               affinity=[2, 3])
    # sockperf takes 14 (its own header) to 65,507 B: a row outside gets sockperf at its nearest size, named so
    assert [p.matches["block_bytes"] for p in plans] == [1, 14, 64, 65507, 65508]
    assert [p.argv[p.argv.index("-m") + 1] for p in plans] == ["14", "14", "64", "65507", "65507"]
    assert plans[0].note == "sockperf at 14 B, its smallest message (14-65507 B); this row is 1 B"
    assert plans[4].note == "sockperf at 65507 B, its largest message (14-65507 B); this row is 65508 B"
    assert [p.note for p in plans[1:4]] == [None, None, None]
    p = plans[2]
    assert p.argv == ("taskset", "-c", "2", "sockperf", "pp", "--tcp", "-i", "127.0.0.1", "-p", PORT, "-m", "64",
                      "-t", "6", "--full-rtt")
    assert p.server_argv == ("taskset", "-c", "3", "sockperf", "sr", "--tcp", "-i", "127.0.0.1", "-p", PORT)
    assert p.needs == ("sockperf",) and p.server_proto == "tcp"
    assert p.matches == {"op": "tcp_rr", "threads": 1, "block_bytes": 64} and p.primary == "round_trips_per_s"


def test_sockperf_udp_busy_unpinned_and_only_one_stream():
    p = sockperf.plans(net_ctx("udp_rr", sizes=(64,), streams=(1, 8), poll="busy"), affinity=[0])[0]
    assert p.argv == ("sockperf", "pp", "-i", "127.0.0.1", "-p", PORT, "-m", "64", "-t", "6", "--full-rtt",
                      "--nonblocked")
    assert p.server_argv == ("sockperf", "sr", "-i", "127.0.0.1", "-p", PORT, "--nonblocked")
    assert p.needs == () and p.server_proto == "udp"
    assert sockperf.plans(net_ctx("udp_rr", streams=(2, 4))) == []  # no single-connection row to match
    assert sockperf.plans(net_ctx("udp_stream")) == []


def test_the_table_maps_network_ops():
    tools = {op: [p.tool for p in table.plan(net_ctx(op))[0]]
             for op in ("tcp_stream", "udp_stream", "tcp_rr", "udp_rr")}
    assert tools == {"tcp_stream": ["iperf3"], "udp_stream": ["iperf3"], "tcp_rr": ["sockperf", "ping"],
                     "udp_rr": ["sockperf", "ping"]}


# --- IOzone builder ------------------------------------------------------------------------------------

DISK = {"op": ["seq_read", "seq_write", "rand_read", "rand_write", "rw"], "blocks": [512, 4096, 1048576, 6000],
        "threads": [1, 4], "direct": True, "iodepth": 1, "file_size": 64 << 20, "duration_s": 5, "warmup_s": 0}


def test_iozone_one_process_per_op_and_block():
    plans = iozone.plans(Context(experiment="disk", params=DISK))
    assert [(p.matches["op"], p.matches["block_bytes"]) for p in plans] == [
        (op, b) for op in ("seq_read", "seq_write", "rand_read", "rand_write") for b in (4096, 1048576)]
    assert all(p.matches["threads"] == 1 for p in plans)
    by = {(p.matches["op"], p.matches["block_bytes"]): p for p in plans}
    assert by["seq_read", 4096].argv == ("iozone", "-i", "0", "-i", "1", "-r", "4k", "-s", "65536k", "-f",
                                         "iozone.tmp", "-e", "-I")
    assert by["seq_write", 1048576].argv[:5] == ("iozone", "-i", "0", "-r", "1024k")
    assert by["rand_write", 4096].argv[:7] == ("iozone", "-i", "0", "-i", "2", "-r", "4k")
    assert [by[op, 4096].primary for op in ("seq_read", "seq_write", "rand_read", "rand_write")] == [
        "read_mb_s", "write_mb_s", "random_read_mb_s", "random_write_mb_s"]
    buffered = iozone.plans(Context(experiment="disk", params={**DISK, "direct": False}))
    assert "-I" not in buffered[0].argv
    # our reads with direct false drop the page cache; IOzone would read its file back from the cache: not run
    reads = [p for p in buffered if p.matches["op"] in ("seq_read", "rand_read")]
    assert reads and all(p.unavailable and "cache_dropped" in p.unavailable for p in reads)
    assert all(p.unavailable is None for p in buffered if p.matches["op"] in ("seq_write", "rand_write"))
    # no `direct` in the job's params: the kernel's start event says what ran (direct, its default)
    started = iozone.plans(Context(experiment="disk", params={k: v for k, v in DISK.items() if k != "direct"},
                                   start={"direct": True, "logical_block_bytes": 4096}))
    assert started and all(p.argv[-1] == "-I" and p.unavailable is None for p in started)
    assert iozone.plans(Context(experiment="disk", params={**DISK, "threads": [2]})) == []
    assert [tool for tool, _ in table.builders("disk")] == ["fio", "iozone"]


# --- parsers -------------------------------------------------------------------------------------------


def test_iperf3_receiver_sum_in_mbit_leads():
    got = iperf3.parse_received_mbps((REFTOOLS / "iperf3-3.12-tcp-P2.json").read_text())
    rx = next(m for m in got if m["name"] == "received_bps" and "stream" not in m)
    assert got[0]["name"] == "received_mbps" and got[0]["unit"] == "Mbit/s"
    assert got[0]["value"] == pytest.approx(rx["value"] / 1e6) and "sum_received" in got[0]["derived"]
    udp = iperf3.parse_received_mbps((REFTOOLS / "iperf3-3.12-udp.json").read_text())
    assert udp[0]["name"] == "received_mbps" and udp[0]["protocol"] == "UDP"
    with pytest.raises(ParseError):
        iperf3.parse_received_mbps((REFTOOLS / "iperf3-3.12-error-connect.json").read_text())


def test_sockperf_round_trips_per_second_from_the_full_rtt():
    got = sockperf.parse_rr((REFTOOLS / "sockperf-3.7-ping-pong-full-rtt.txt").read_text())
    avg = next(m for m in got if m["name"] == "latency_avg")
    assert [m["name"] for m in got[:2]] == ["round_trips_per_s", "latency_p50"]
    assert got[0]["unit"] == "RT/s" and got[0]["value"] == pytest.approx(1e6 / avg["value"])
    assert "full-RTT" in got[0]["derived"] and got[0]["latency_avg_us"] == avg["value"]
    with pytest.raises(ParseError, match="needs --full-rtt"):  # a one-way (RTT / 2) report
        sockperf.parse_rr((REFTOOLS / "sockperf-3.7-ping-pong-tcp.txt").read_text())
    with pytest.raises(ParseError):
        sockperf.parse_rr((REFTOOLS / "sockperf-3.7-error-tcp-connect.txt").read_text())


def test_iozone_kb_per_s_become_mb_per_s():
    got = iozone.parse_mb((REFTOOLS / "iozone-3.489-write-random.txt").read_text())
    pairs = list(zip(got[::2], got[1::2], strict=True))
    assert pairs and all(a["name"] == b["name"] + "_mb_s" and a["unit"] == "MB/s" and b["unit"] == "KB/s"
                         for a, b in pairs)
    a, b = pairs[0]
    assert a["value"] == pytest.approx(b["value"] * 1024 / 1e6) and a["printed"] == b["value"]
    assert a["record_kb"] == b["record_kb"] and "x 1024 / 1e6" in a["derived"]


# --- the server's port ----------------------------------------------------------------------------------


def test_port_ready_reads_proc_net(tmp_path):
    head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    (tmp_path / "tcp").write_text(head + "   0: 0100007F:1F90 00000000:0000 0A 0:0 00:0 0 0 0 1\n"
                                         "   1: 0100007F:1F91 0100007F:9C40 01 0:0 00:0 0 0 0 1\n")
    (tmp_path / "udp").write_text(head + "  5: 0100007F:1F92 00000000:0000 07 0:0 00:0 0 0 0 1\n")
    assert engine.port_ready(0x1F90, "tcp", tmp_path) is True
    assert engine.port_ready(0x1F91, "tcp", tmp_path) is False  # connected, not listening
    assert engine.port_ready(0x1F92, "udp", tmp_path) is True
    assert engine.port_ready(0x1F90, "udp", tmp_path) is False
    assert engine.port_ready(80, "tcp", tmp_path / "none") is None


def test_free_port_is_free_for_udp_too():
    import socket

    port = engine.free_port("udp")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u, socket.socket() as t:
        u.bind(("127.0.0.1", port))
        t.bind(("127.0.0.1", port))


# --- a plan's own server, with fake tools ------------------------------------------------------------------

FAKE = r'''
import json, os, socket, sys, time
MODE, LOG = {mode!r}, {log!r}
args = sys.argv[1:]
with open(LOG, "a") as fh:
    fh.write(json.dumps({{"argv": sys.argv, "pid": os.getpid()}}) + "\n")
port = int(args[args.index("-p") + 1])
if "-s" in args:
    if MODE == "server-dies":
        sys.stderr.write("iperf3: error - unable to start listener: Address already in use\n")
        sys.exit(1)
    if MODE == "server-deaf":
        time.sleep(60)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(4)
    while True:  # never exits on its own: the phase must stop it
        c, _ = s.accept()
        c.close()
socket.create_connection(("127.0.0.1", port), timeout=2).close()  # refused unless the server listens
sys.stdout.write(open({fixture!r}).read())
'''


@pytest.fixture
def fake_iperf3(tmp_path):
    def make(mode: str = "ok") -> Path:
        bindir = tmp_path / "bin"
        bindir.mkdir(exist_ok=True)
        path = bindir / "iperf3"
        body = FAKE.format(mode=mode, log=str(bindir / "calls.jsonl"),
                           fixture=str(REFTOOLS / "iperf3-3.12-tcp-P2.json"))
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return bindir

    return make


def calls(bindir: Path) -> list[dict]:
    log = bindir / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def run_phase(plans, tmp_path, path=None, deadline_s=60.0):
    phase = ReferencePhase(list(plans), tmp_path / "work" / "references", time.monotonic() + deadline_s, path=path)
    limit = time.monotonic() + 30
    while not phase.done and time.monotonic() < limit:
        phase.step(0.05)
    phase.close()
    return phase


def test_the_server_starts_first_on_the_clients_port_and_is_stopped_after(fake_iperf3, tmp_path):
    bindir = fake_iperf3("ok")
    plans = iperf3.plans(net_ctx("tcp_stream", streams=(2,)))
    got = run_phase(plans, tmp_path, path=str(bindir)).report()
    assert got[0]["status"] == "ok", got[0]["reason"]
    server, client = calls(bindir)
    assert "-s" in server["argv"] and "-c" in client["argv"]
    port = client["argv"][client["argv"].index("-p") + 1]
    assert port.isdigit() and server["argv"][server["argv"].index("-p") + 1] == port
    assert got[0]["argv"][0] == str(bindir / "iperf3") and PORT not in got[0]["argv"]
    assert got[0]["metrics"][0]["name"] == "received_mbps" and got[0]["metrics"][0]["primary"] is True
    assert got[0]["matches"] == {"op": "tcp_stream", "threads": 2, "block_bytes": 1024}
    assert pids_alive([server["pid"]]) == []
    assert not (tmp_path / "work" / "references").exists()


def test_a_server_that_exits_fails_the_plan_with_its_words(fake_iperf3, tmp_path):
    bindir = fake_iperf3("server-dies")
    got = run_phase(iperf3.plans(net_ctx("tcp_stream")), tmp_path, path=str(bindir)).report()
    assert got[0]["status"] == "failed"
    assert got[0]["reason"].startswith("iperf3 server exited before listening (exit code 1)")
    assert "Address already in use" in got[0]["reason"]
    assert [c for c in calls(bindir) if "-c" in c["argv"]] == []  # no client without a server


def test_a_server_that_never_listens_is_stopped(fake_iperf3, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "SERVER_READY_S", 0.5)
    bindir = fake_iperf3("server-deaf")
    got = run_phase(iperf3.plans(net_ctx("tcp_stream")), tmp_path, path=str(bindir)).report()
    assert got[0]["status"] == "failed" and "did not listen on 127.0.0.1:" in got[0]["reason"]
    assert pids_alive([c["pid"] for c in calls(bindir)]) == []


def test_missing_network_tools_are_unavailable(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    plans = iperf3.plans(net_ctx("udp_stream")) + sockperf.plans(net_ctx("udp_rr"), affinity=[0, 1])
    got = run_phase(plans, tmp_path, path=str(empty)).report()
    assert [(e["tool"], e["status"], e["reason"]) for e in got] == [
        ("iperf3", "unavailable", "iperf3 is not installed on this host (Debian: apt install iperf3)"),
        ("sockperf", "unavailable", "sockperf is not installed on this host (Debian: apt install sockperf)")]
    assert got[0]["argv"][4] == PORT


# --- real runs, when the tools are here ------------------------------------------------------------------

real = pytest.mark.skipif


@real(shutil.which("iperf3") is None, reason="iperf3 is not installed")
@pytest.mark.parametrize("op", ["tcp_stream", "udp_stream"])
def test_real_iperf3(tmp_path, op):
    plans = iperf3.plans(net_ctx(op, sizes=(16384,), duration_s=1, warmup_s=0))
    started = time.monotonic()
    got = run_phase(plans, tmp_path).report()[0]
    assert got["status"] == "ok", got["reason"]
    first = got["metrics"][0]
    assert first["name"] == "received_mbps" and first["unit"] == "Mbit/s" and first["primary"] is True
    assert first["value"] > 0 and time.monotonic() - started < 5


@real(shutil.which("sockperf") is None or shutil.which("taskset") is None, reason="sockperf is not installed")
def test_real_sockperf_tcp(tmp_path):
    plans = sockperf.plans(net_ctx("tcp_rr", sizes=(64,), duration_s=1, warmup_s=0))
    got = run_phase(plans, tmp_path).report()[0]  # sockperf itself takes ~2 s beyond -t
    assert got["status"] == "ok", got["reason"]
    rate, p50 = got["metrics"][:2]
    assert rate["name"] == "round_trips_per_s" and rate["unit"] == "RT/s" and rate["primary"] is True
    assert rate["value"] == pytest.approx(1e6 / rate["latency_avg_us"]) and p50["name"] == "latency_p50"
    assert p50["half_rtt"] is False


@real(shutil.which("iozone") is None, reason="iozone is not installed")
def test_real_iozone(tmp_path):
    params = {"op": ["seq_read"], "blocks": [4096], "threads": [1], "direct": False, "file_size": 4 << 20}
    got = run_phase(iozone.plans(Context(experiment="disk", params=params)), tmp_path).report()[0]
    assert got["status"] == "ok", got["reason"]
    first = got["metrics"][0]
    assert (first["name"], first["unit"], first["primary"], first["record_kb"]) == ("read_mb_s", "MB/s", True, 4)
    assert first["value"] > 0
