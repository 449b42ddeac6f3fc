"""ping: iputils 20221126 on 127.0.0.1, the seed 004 network run; BusyBox and macOS summary lines."""

from __future__ import annotations

import pytest

from hostbench_common.reftools import parse_text


def test_iputils_loopback(parse, pick):
    r = parse("ping", "ping-iputils-20221126-loopback.txt")
    assert r["format"] == "text"
    # "rtt min/avg/max/mdev = 0.030/0.034/0.039/0.003 ms", "5 packets transmitted, 5 received, 0% packet loss"
    assert [(m["name"], m["value"]) for m in r["metrics"]] == [
        ("loss_percent", 0.0), ("rtt_min", 0.030), ("rtt_avg", 0.034), ("rtt_max", 0.039), ("rtt_mdev", 0.003)]
    assert pick(r, "rtt_avg")["unit"] == "ms" and pick(r, "loss_percent")["unit"] == "%"
    assert pick(r, "rtt_avg")["transmitted"] == 5 and pick(r, "rtt_avg")["received"] == 5


def test_iputils_quiet_and_seed(parse, pick):
    q = parse("ping", "ping-iputils-20221126-quiet.txt")
    assert pick(q, "rtt_max")["value"] == 0.040 and pick(q, "rtt_mdev")["value"] == 0.005
    s = parse("ping", "seed-004-ping-iputils.txt")
    assert [m["value"] for m in s["metrics"]] == [0.0, 1.553, 1.811, 3.382, 0.428]
    assert pick(s, "loss_percent")["transmitted"] == 15


def test_busybox_and_macos_summaries():
    busybox = ("PING 127.0.0.1 (127.0.0.1): 56 data bytes\n\n--- 127.0.0.1 ping statistics ---\n"
               "3 packets transmitted, 3 packets received, 0% packet loss\n"
               "round-trip min/avg/max = 0.058/0.074/0.091 ms\n")
    r = parse_text("ping", busybox)
    assert [m["name"] for m in r["metrics"]] == ["loss_percent", "rtt_min", "rtt_avg", "rtt_max"]
    assert r["metrics"][2]["value"] == 0.074 and r["metrics"][0]["format_variant"] == "busybox"
    macos = ("--- 127.0.0.1 ping statistics ---\n"
             "5 packets transmitted, 4 packets received, 20.0% packet loss\n"
             "round-trip min/avg/max/stddev = 0.041/0.097/0.167/0.044 ms\n")
    m = parse_text("ping", macos)
    assert m["metrics"][0]["value"] == 20.0
    assert m["metrics"][-1] == {"name": "rtt_mdev", "value": 0.044, "unit": "ms", "printed_as": "stddev",
                                "transmitted": 5, "received": 4, "format_variant": "bsd"}


def test_total_loss_is_a_result_without_round_trips():
    text = ("PING 10.0.0.9 (10.0.0.9) 56(84) bytes of data.\n\n--- 10.0.0.9 ping statistics ---\n"
            "3 packets transmitted, 0 received, 100% packet loss, time 2030ms\n")
    r = parse_text("ping", text)
    assert r["metrics"] == [{"name": "loss_percent", "value": 100.0, "unit": "%", "transmitted": 3, "received": 0}]


def test_errors_and_duplicates_line():
    text = ("--- h ping statistics ---\n"
            "4 packets transmitted, 3 received, +1 errors, 25% packet loss, time 3004ms\n"
            "rtt min/avg/max/mdev = 0.1/0.2/0.3/0.05 ms\n")
    r = parse_text("ping", text)
    assert r["metrics"][0]["value"] == 25.0


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("ping-iputils-20221126-error-unknown-host.txt",
         r"ping reported an error: 'ping: nonexistent.invalid: Name or service not known'"),
        ("ping-iputils-20221126-loopback-truncated.txt", r"no '--- ping statistics ---' summary: the ping output is truncated"),
        ("empty.txt", r"the file is empty"),
        ("sockperf-3.7-ping-pong-udp.txt", r"not ping output: .*; it looks like sockperf output"),
        ("5 packets transmitted, 5 received, 0% packet loss, time 4ms\nrtt min/avg/max/mdev = 0.5/0.2/0.9/0.1 ms\n",
         r"ping round-trip times are inconsistent: min 0.5, avg 0.2, max 0.9"),
        ("5 packets transmitted, 6 received, 0% packet loss, time 4ms\n", r"ping counts are inconsistent"),
        ("5 packets transmitted, 4 received, 0% packet loss, time 4ms\nrtt min/avg/max/mdev = 0.1/0.2/0.3/0.1 ms\n",
         r"ping says 0.0% loss but 4 of 5 packets came back \(20.0%\)"),
        ("5 packets transmitted, 5 received, 0% packet loss, time 4ms\n", r"no 'rtt min/avg/max/mdev' line"),
    ],
)
def test_refusals(refuse, name, match):
    refuse("ping", name, match)


def test_two_runs_in_one_file_are_refused(refuse, load):
    text = load("ping-iputils-20221126-loopback.txt") + load("ping-iputils-20221126-quiet.txt")
    refuse("ping", text, r"2 ping statistics blocks in one file")


def test_iputils_pipe_and_ewma_suffix_is_read():
    text = ("--- 127.0.0.1 ping statistics ---\n"
            "100 packets transmitted, 100 received, 0% packet loss, time 12ms\n"
            "rtt min/avg/max/mdev = 0.003/0.004/0.020/0.002 ms, pipe 2, ipg/ewma 0.121/0.004 ms\n")
    r = parse_text("ping", text)
    assert [m["value"] for m in r["metrics"]] == [0.0, 0.003, 0.004, 0.020, 0.002]
