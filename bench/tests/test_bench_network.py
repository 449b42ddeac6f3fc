"""bench network's iperf3 client: a refused connection (iperf3's server listening again after the previous test,
as when two iperf3 runs follow each other in pairs A B, B A) is tried again; any other error is not. Issue 26's
`bench network` ended in a traceback on 'unable to connect to server: Connection refused' at its second pair."""
import pytest

from hostbench_bench import network

REFUSED = "iperf3 reported an error: 'unable to connect to server: Connection refused'"


def test_a_refused_connection_is_tried_again_and_other_errors_are_not(monkeypatch):
    calls = []

    def fake_run(argv, timeout=0):
        calls.append(argv)
        if len(calls) < 3:
            raise RuntimeError(f"cannot read iperf3's output: {REFUSED}")
        return "ok"

    monkeypatch.setattr(network, "run_cmd", fake_run)
    monkeypatch.setattr(network, "resolve", lambda argv: argv)
    monkeypatch.setattr(network, "parsed", lambda parser, text, what: [{"name": "received_mbps", "value": 1.0}])
    monkeypatch.setattr(network.time, "sleep", lambda s: None)
    assert network.iperf3_metrics(5201, 5, 131072) == [{"name": "received_mbps", "value": 1.0}]
    assert len(calls) == 3 and calls[0] == calls[2]

    def broken(argv, timeout=0):
        raise RuntimeError("iperf3 exited 1: the server is busy running a test")

    monkeypatch.setattr(network, "run_cmd", broken)
    with pytest.raises(RuntimeError, match="busy"):
        network.iperf3_metrics(5201, 5, 131072)
