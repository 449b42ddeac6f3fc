"""sockperf 3.7 on 127.0.0.1: ping-pong (UDP, TCP, --full-rtt) and under-load; the half-RTT key."""

from __future__ import annotations

import pytest


def test_ping_pong_udp_is_half_rtt(parse, pick):
    r = parse("sockperf", "sockperf-3.7-ping-pong-udp.txt")
    assert r["format"] == "text"
    avg = pick(r, "latency_avg")
    assert avg["value"] == 10.371 and avg["unit"] == "µs" and avg["std_dev"] == 94.324
    assert avg["half_rtt"] is True and avg["measures"] == "one-way = round trip / 2 (sockperf default)"
    assert pick(r, "latency_p50")["value"] == 5.403
    assert pick(r, "latency_p99")["value"] == 7.341
    assert pick(r, "latency_p90")["value"] == 5.718
    assert pick(r, "latency_p999")["value"] == 1897.956
    assert pick(r, "latency_min")["value"] == 5.057 and pick(r, "latency_max")["value"] == 4193.298
    assert avg["observations"] == 74669 and avg["dropped"] == 0
    assert all(m["half_rtt"] is True for m in r["metrics"])


def test_full_rtt_is_marked(parse, pick):
    r = parse("sockperf", "sockperf-3.7-ping-pong-full-rtt.txt")
    avg = pick(r, "latency_avg")
    assert avg["value"] == 67.482 and avg["half_rtt"] is False  # "avg-rtt=67.482", "Round trip is 67.482 usec"
    assert pick(r, "latency_p50")["value"] == 11.347 and pick(r, "latency_p99")["value"] == 1357.167


def test_tcp_and_under_load(parse, pick):
    t = parse("sockperf", "sockperf-3.7-ping-pong-tcp.txt")
    assert pick(t, "latency_avg")["value"] == 13.557 and pick(t, "latency_p99")["value"] == 19.904
    u = parse("sockperf", "sockperf-3.7-under-load-udp.txt")
    assert pick(u, "latency_avg")["value"] == 214.39 and pick(u, "latency_p50")["value"] == 14.537
    assert pick(u, "latency_p99")["value"] == 3970.928 and pick(u, "latency_avg")["observations"] == 153


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("sockperf-3.7-error-tcp-connect.txt",
         r"sockperf reported an error: 'sockperf: ERROR: Can`t connect socket \(errno=111 Connection refused\)'"),
        ("sockperf-3.7-error-udp-no-server.txt",
         r"sockperf reported an error: 'No messages were received from the server. Is the server down\?'"),
        ("sockperf-3.7-ping-pong-udp-truncated.txt", r"lacks its 50th or 99th percentile line \(truncated output\?\)"),
        ("empty.txt", r"the file is empty"),
        ("ping-iputils-20221126-loopback.txt", r"not sockperf output: no 'sockperf:' lines; it looks like ping output"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("sockperf", name, match)


def test_missing_min_line_and_unordered_percentiles_are_refused(refuse, load):
    full = load("sockperf-3.7-ping-pong-udp.txt")
    refuse("sockperf", full.replace("sockperf: ---> <MIN> observation =    5.057\n", ""),
           r"lacks its <MAX>/<MIN> observation lines")
    refuse("sockperf", full.replace("percentile 50.000 =    5.403", "percentile 50.000 =    6.403"),
           r"sockperf percentiles are not in order")


def test_throughput_mode_is_refused(refuse):
    text = ("sockperf: == version #3.7-no.git ==\nsockperf: Total of 936 messages sent in 1.100 sec\n"
            "sockperf: Summary: Message Rate is 851 [msg/sec]\nsockperf: Summary: BandWidth is 0.012 MBps (0.097 Mbps)\n")
    refuse("sockperf", text, r"a sockperf throughput-mode report: it has no latency figures")


def test_newer_sockperf_avg_line_with_more_statistics(load):
    from hostbench_common.reftools import parse_text

    text = load("sockperf-3.7-ping-pong-udp.txt").replace(
        "avg-latency=10.371 (std-dev=94.324)",
        "avg-latency=10.371 (std-dev=94.324, mean-ad=3.1, median-ad=0.2, siqr=0.1, cv=9.1, std-error=0.3)")
    assert parse_text("sockperf", text)["metrics"][0]["value"] == 10.371
