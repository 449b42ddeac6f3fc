"""iperf3 3.12 on 127.0.0.1: JSON (-J) and text, TCP, -P 2, UDP, -R, server side, and its errors."""

from __future__ import annotations

import pytest


def test_json_tcp(parse, pick):
    r = parse("iperf3", "iperf3-3.12-tcp.json")
    assert r["format"] == "json" and len(r["metrics"]) == 3
    sent = pick(r, "sent_bps")
    assert sent["value"] == 10820352628.071192 and sent["unit"] == "bit/s" and sent["protocol"] == "TCP"
    assert pick(r, "received_bps")["value"] > 0
    assert pick(r, "retransmits")["unit"] == "count"


def test_json_parallel_streams(parse, pick):
    r = parse("iperf3", "iperf3-3.12-tcp-P2.json")
    assert pick(r, "sent_bps", stream=None)["value"] == 9318488198.946945
    assert pick(r, "received_bps", stream=None)["value"] == 9305261582.418943
    assert pick(r, "retransmits", stream=None)["value"] == 3
    assert pick(r, "sent_bps", stream=5)["value"] == 4727308121.6031
    assert pick(r, "retransmits", stream=7)["value"] == 2
    assert pick(r, "received_bps", stream=7)["value"] == 4584586916.436468
    assert [m["name"] for m in r["metrics"][:3]] == ["sent_bps", "received_bps", "retransmits"]  # totals first


def test_json_udp_loss_and_jitter_from_the_receiver(parse, pick):
    r = parse("iperf3", "iperf3-3.12-udp.json")
    assert pick(r, "sent_bps")["value"] == 100000485.9637957
    assert pick(r, "received_bps")["value"] == 99992037.2660747
    lost = pick(r, "lost_percent")
    assert lost["value"] == 0.0 and lost["unit"] == "%" and lost["packets"] == 763 and lost["lost_packets"] == 0
    jitter = pick(r, "jitter_ms")
    assert jitter["value"] == 0.005934816257925102 and jitter["unit"] == "ms"
    assert not [m for m in r["metrics"] if m["name"] == "retransmits"]


def test_text_tcp(parse, pick):
    r = parse("iperf3", "iperf3-3.12-tcp.txt")
    assert r["format"] == "text"
    assert pick(r, "sent_bps")["value"] == 12.0e9  # "12.0 Gbits/sec" sender
    assert pick(r, "received_bps")["value"] == 12.0e9
    assert pick(r, "retransmits")["value"] == 0


def test_text_parallel_sum_and_streams(parse, pick):
    r = parse("iperf3", "iperf3-3.12-tcp-P2.txt")
    assert pick(r, "sent_bps", stream=None)["value"] == 9.57e9
    assert pick(r, "received_bps", stream=None)["value"] == 9.54e9
    assert pick(r, "retransmits", stream=None)["value"] == 3
    assert pick(r, "sent_bps", stream=5)["value"] == 4.79e9
    assert pick(r, "received_bps", stream=7)["value"] == 4.77e9


def test_text_udp(parse, pick):
    r = parse("iperf3", "iperf3-3.12-udp.txt")
    assert pick(r, "sent_bps")["value"] == 100e6
    assert pick(r, "received_bps")["value"] == 99.6e6
    assert pick(r, "jitter_ms")["value"] == 0.112  # the receiver's, not the sender's 0.000
    assert pick(r, "lost_percent")["value"] == 0.0


def test_text_reverse_and_server_side(parse, pick):
    r = parse("iperf3", "iperf3-3.12-tcp-reverse.txt")
    assert pick(r, "sent_bps")["reverse"] is True and pick(r, "sent_bps")["value"] == 6.9e9
    assert pick(r, "retransmits")["value"] == 4
    s = parse("iperf3", "iperf3-3.12-server-side.txt")
    assert s["metrics"] == [{"name": "received_bps", "value": 7.45e9, "unit": "bit/s", "protocol": "TCP",
                             "side": "server"}]


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("iperf3-3.12-error-connect.json", r"iperf3 reported an error: 'unable to connect to server: Connection refused'"),
        ("iperf3-3.12-error-connect.txt",
         r"iperf3 reported an error: 'iperf3: error - unable to connect to server: Connection refused'"),
        ("iperf3-3.12-error-server-killed.json", r"iperf3 reported an error: 'control socket has closed unexpectedly'"),
        ("iperf3-3.12-error-server-killed.txt", r"'iperf3: error - control socket has closed unexpectedly'"),
        ("iperf3-3.12-tcp-truncated.json", r"the iperf3 JSON is incomplete or corrupt \(truncated output\?\)"),
        ("iperf3-3.12-tcp-truncated.txt", r"does not end with 'iperf Done.' \(truncated or interrupted\)"),
        ("seed-001-iperf3-tcp-ocr-scrambled.txt", r"no end-of-test summary in the iperf3 report"),
        ("seed-003-iperf3-udp-ocr-missing-ids.txt", r"no end-of-test summary in the iperf3 report"),
        ("seed-004-iperf3-udp-server-ocr-detached-tags.txt", r"not iperf3 output: no 'Connecting to host'"),
        ("empty.txt", r"the file is empty"),
        ("iperf2-2.1.8-tcp.txt", r"not iperf3 output: .*; it looks like iperf2 output"),
        ("fio-3.33-seqread.json", r"not iperf3 output: the JSON has no 'start'/'end'; it looks like fio output"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("iperf3", name, match)


def test_json_end_without_summary_is_refused(refuse):
    refuse("iperf3", '{"start": {"test_start": {"protocol": "TCP"}}, "intervals": [], "end": {}}',
           r"no end-of-test summary \(interrupted or truncated run\)")


def test_text_with_tags_detached_by_ocr_is_refused(refuse, load):
    text = load("iperf3-3.12-tcp.txt").replace("12.0 Gbits/sec    0             sender",
                                               "12.0 Gbits/sec    0\n            sender")
    refuse("iperf3", text, r"malformed iperf3 summary line|no sender/receiver summary")


def test_text_unknown_rate_unit_is_refused(refuse, load):
    text = load("iperf3-3.12-tcp.txt").replace("12.0 Gbits/sec    0             sender",
                                               "12.0 Gbytes/sec    0             sender")
    refuse("iperf3", text, r"malformed iperf3 summary line 8: .*Gbytes/sec")


def test_bidir_json_and_text_give_both_directions(parse, pick):
    j = parse("iperf3", "iperf3-3.12-tcp-bidir.json")
    assert len(j["metrics"]) == 6  # one stream each way: no per-stream rows
    assert pick(j, "sent_bps", direction="forward")["value"] == 4326085142.770377
    assert pick(j, "received_bps", direction="reverse")["value"] == 4003051726.98925
    assert pick(j, "retransmits", direction="reverse")["value"] == 11
    t = parse("iperf3", "iperf3-3.12-tcp-bidir.txt")
    assert pick(t, "sent_bps", direction="forward")["value"] == 6.36e9  # [  5][TX-C] ... sender
    assert pick(t, "received_bps", direction="reverse")["value"] == 5.62e9  # [  7][RX-C] ... receiver
    assert pick(t, "retransmits", direction="reverse")["value"] == 10
    assert not [m for m in t["metrics"] if "stream" in m]
