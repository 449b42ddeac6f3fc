"""iperf 2.1.8 on 127.0.0.1 (TCP, -e, -P 2, UDP with server report, server side) and iperf 2.0 from seed 000."""

from __future__ import annotations

import pytest


def test_tcp_client_sends_only(parse, pick):
    r = parse("iperf2", "iperf2-2.1.8-tcp.txt")
    assert r["format"] == "text"
    assert r["metrics"] == [{"name": "sent_bps", "value": 21.9e9, "unit": "bit/s", "protocol": "TCP"}]


def test_tcp_enhanced_retransmits(parse, pick):
    r = parse("iperf2", "iperf2-2.1.8-tcp-enhanced.txt")
    assert pick(r, "sent_bps")["value"] == 28.5e9
    assert pick(r, "retransmits")["value"] == 0  # the Rtry column


def test_tcp_parallel_sum_and_streams(parse, pick):
    r = parse("iperf2", "iperf2-2.1.8-tcp-P2.txt")
    assert pick(r, "sent_bps", stream=None)["value"] == 45.6e9
    assert pick(r, "sent_bps", stream=1)["value"] == 24.3e9
    assert pick(r, "sent_bps", stream=2)["value"] == 21.0e9
    assert r["metrics"][0]["value"] == 45.6e9


def test_udp_client_with_server_report(parse, pick):
    r = parse("iperf2", "iperf2-2.1.8-udp.txt")
    assert pick(r, "sent_bps")["value"] == 105e6
    assert pick(r, "received_bps")["value"] == 102e6
    lost = pick(r, "lost_percent")
    assert (lost["value"], lost["lost_packets"], lost["packets"]) == (2.6, 464, 17836)
    assert pick(r, "jitter_ms")["value"] == 0.0


def test_udp_enhanced_client_and_server(parse, pick):
    r = parse("iperf2", "iperf2-2.1.8-udp-enhanced.txt")
    assert pick(r, "received_bps")["value"] == 105e6
    assert pick(r, "lost_percent")["value"] == 0.25
    s = parse("iperf2", "iperf2-2.1.8-udp-enhanced-server-side.txt")
    assert [m["name"] for m in s["metrics"]] == ["received_bps", "lost_percent", "jitter_ms"]
    assert pick(s, "lost_percent")["lost_packets"] == 45


def test_seed_iperf20_dual_test(parse, pick):
    r = parse("iperf2", "seed-000-iperf2-dual-tcp.txt")
    assert pick(r, "sent_bps")["value"] == 9.36e9
    back = pick(r, "received_bps")
    assert back["value"] == 9.35e9 and back["direction"] == "reverse"


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("iperf2-2.1.8-error-connect.txt", r"iperf reported an error: 'tcp connect failed: Connection refused'"),
        ("iperf2-2.1.8-error-broken-pipe.txt", r"iperf reported an error: 'tcp write failed: Broken pipe'"),
        ("iperf2-2.1.8-error-udp-no-server-report.txt", r"iperf reported an error: 'read failed: Connection refused'"),
        ("iperf2-2.1.8-error-udp-server-crash.txt", r"iperf reported an error: .*Assertion"),
        ("seed-000-iperf2-udp-no-server-ack.txt", r"iperf reported an error: 'read failed: Connection refused'"),
        ("iperf2-2.1.8-tcp-truncated.txt", r"no final iperf report line"),
        ("iperf2-2.1.8-udp-truncated.txt", r"no final iperf report line"),
        ("empty.txt", r"the file is empty"),
        ("iperf3-3.12-tcp.txt", r"not iperf2 output: .*; it looks like iperf3 output"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("iperf2", name, match)


def test_udp_client_without_server_report_is_refused(refuse, load):
    # the client's lines alone, as when the report never came back but no error line was kept
    text = "\n".join(load("iperf2-2.1.8-udp.txt").split("\n")[:9])
    refuse("iperf2", text, r"the iperf UDP client got no 'Server Report'")


def test_zero_transfer_is_refused(refuse, load):
    text = load("iperf2-2.1.8-tcp.txt").replace("5.11 GBytes  21.9 Gbits/sec", "0.00 Bytes  0.00 bits/sec")
    refuse("iperf2", text, r"iperf transferred no data")
