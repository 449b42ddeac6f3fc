"""Two-host network runs at the runner: serve/drive argv, peer and port checks, listening/served events."""
import json

import pytest
from hostbench_common.experiments import RUNS

from hostbench_runner.errors import ParamError, ProtocolError
from hostbench_runner.protocol import Stream, parse_line


def test_serve_argv_binds_every_address_on_a_free_port_until_the_deadline(net_schema):
    exp = RUNS["network_serve"]
    params = exp.kernel_params({"op": "udp_rr"}, net_schema, deadline_s=720.4)
    assert exp.argv("hbk", params) == ["hbk", "net", "--role", "serve", "--bind", "0.0.0.0", "--port", "0",
                                       "--op", "udp_rr", "--serve_s", "721"]
    with pytest.raises(ParamError):
        exp.kernel_params({"op": "udp_rr", "serve_s": 5}, net_schema, deadline_s=100)  # not the job's to set
    with pytest.raises(ParamError):
        exp.kernel_params({"op": "tcp_rr", "port": 5000}, net_schema, deadline_s=100)


DRIVE = {"op": "tcp_stream", "sizes": [1024, 65536], "streams": [1, 2], "poll": "blocking", "repeats": 2,
         "duration_s": 1.5, "warmup_s": 0, "stable_cv": 0, "max_repeats": 10, "reference": False,
         "server_run_id": 7, "peer": "10.77.0.1", "port": 40123}


def test_drive_argv(net_schema):
    exp = RUNS["network_drive"]
    argv = exp.argv("hbk", exp.kernel_params(DRIVE, net_schema, deadline_s=300))
    assert argv == ["hbk", "net", "--role", "drive", "--peer", "10.77.0.1", "--port", "40123", "--op", "tcp_stream",
                    "--sizes", "1024,65536", "--streams", "1,2", "--poll", "blocking", "--repeats", "2",
                    "--duration_s", "1.5", "--warmup_s", "0"]
    v6 = exp.argv("hbk", exp.kernel_params({**DRIVE, "peer": "fd00::2"}, net_schema))
    assert v6[v6.index("--peer") + 1] == "fd00::2"


@pytest.mark.parametrize(("change", "why"), [
    ({"peer": "example.com"}, "peer"), ({"peer": "10.0.0.1; rm -rf /"}, "peer"), ({"peer": "--port"}, "peer"),
    ({"port": 0}, "port"), ({"port": 65536}, "port"), ({"port": "80"}, "port"), ({"port": None}, "port"),
    ({"server_run_id": "x"}, "server_run_id"), ({"bind": "0.0.0.0"}, "bind"),
])
def test_drive_refuses_a_bad_peer_or_port(net_schema, change, why):
    with pytest.raises(ParamError, match=why):
        RUNS["network_drive"].kernel_params({**DRIVE, **change}, net_schema)


def test_drive_without_peer_is_refused(net_schema):
    params = {k: v for k, v in DRIVE.items() if k != "peer"}
    with pytest.raises(ParamError, match="peer"):
        RUNS["network_drive"].kernel_params(params, net_schema)


def _line(**kw):
    return json.dumps({"v": 1, **kw})


START = _line(type="start", kernel="net", params={}, unit="Mbit/s")
LISTENING = _line(type="listening", port=40123, proto="tcp+udp", bind="0.0.0.0", t=1.0)
SERVED = _line(type="served", sessions=1, refused=0, bytes_received=10, checked_bytes=10, verify_failures=0,
               stopped="interrupted by SIGTERM", t=2.0)
END = _line(type="end", status="ok", reason=None, samples=0, results=0, t=2.0)


def test_a_serving_kernel_stream():
    s = Stream()
    for line in (START, LISTENING, SERVED, END):
        s.feed(line)
    assert s.listening["port"] == 40123 and s.served["sessions"] == 1 and s.closed


@pytest.mark.parametrize("lines", [
    [LISTENING],  # before start
    [START, LISTENING, LISTENING],
    [START, SERVED, LISTENING],
    [START, LISTENING, SERVED, SERVED],
])
def test_serving_events_out_of_order(lines):
    s = Stream()
    with pytest.raises(ProtocolError):
        for line in lines:
            s.feed(line)


@pytest.mark.parametrize("bad", [
    _line(type="listening", port=0, proto="tcp+udp", bind="0.0.0.0", t=1.0),
    _line(type="listening", port=70000, proto="tcp+udp", bind="0.0.0.0", t=1.0),
    _line(type="listening", port="80", proto="tcp+udp", bind="0.0.0.0", t=1.0),
    _line(type="listening", proto="tcp+udp", bind="0.0.0.0", t=1.0),
    _line(type="served", sessions=-1, refused=0, bytes_received=0, checked_bytes=0, verify_failures=0, stopped="x",
          t=1.0),
    _line(type="served", sessions=1, refused=0, bytes_received=0, checked_bytes=0, verify_failures=0, t=1.0),
])
def test_bad_serving_events(bad):
    with pytest.raises(ProtocolError):
        parse_line(bad)
