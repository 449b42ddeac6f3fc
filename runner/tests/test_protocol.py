import json

import pytest

from hostbench_runner.errors import ProtocolError
from hostbench_runner.protocol import MAX_LINE_BYTES, Stream, parse_line, sample_for_api

START = {"v": 1, "type": "start", "kernel": "cpu", "params": {}, "unit": "GFLOP/s", "t": 1.0}
RESULT = {"v": 1, "type": "result", "threads": 1, "repeat": 1, "value": 5.0, "unit": "GFLOP/s", "verified": True}
END = {"v": 1, "type": "end", "status": "ok", "reason": None, "samples": 2, "t": 3.0}


def sample(seq, **kw):
    return {"v": 1, "type": "sample", "seq": seq, "t": 2.0 + seq, "interval_s": 1.0, "threads": 1,
            "repeat": 1, "warmup": False, "value": 5.5, "unit": "GFLOP/s", **kw}


def line(obj):
    return (json.dumps(obj) + "\n").encode()


def test_valid_stream():
    s = Stream()
    for obj in (START, sample(0), sample(1, op="fp64"),
                {"v": 1, "type": "result", "threads": 1, "repeat": 1, "value": 5.0, "unit": "GFLOP/s",
                 "work": 10, "seconds": 2.0, "verified": True}, END):
        s.feed(line(obj))
    assert s.closed and s.end["status"] == "ok" and len(s.results) == 1 and s.next_seq == 2


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"Segmentation fault\n", "not JSON"),
        (b"\xff\xfe{}\n", "not UTF-8"),
        (b"[1,2]\n", "not a JSON object"),
        (b'{"type":"start"}\n', "unsupported protocol version None"),
        (line({**START, "v": 2}), "unsupported protocol version 2"),
        (line({**START, "v": "1"}), "unsupported protocol version '1'"),
        (line({**START, "v": True}), "unsupported protocol version True"),
        (line({**START, "type": "hello"}), "unknown event type 'hello'"),
        (line({k: v for k, v in START.items() if k != "unit"}), "start event without 'unit'"),
        (line(sample(0, value="fast")), "sample.value must be number"),
        (line(sample(0, warmup=1)), "sample.warmup must be boolean"),
        (line(sample(-1)), "seq must be >= 0"),
        (b'{"v":1,"type":"sample","seq":0,"t":1,"interval_s":1,"threads":1,"repeat":1,"warmup":false,"value":NaN,"unit":"x"}',
         "not JSON"),
        (line({**END, "status": "great"}), "end.status 'great'"),
        (b"x" * (MAX_LINE_BYTES + 1), "longer than"),
    ],
)
def test_bad_lines_are_refused(raw, message):
    with pytest.raises(ProtocolError, match=message):
        parse_line(raw)


def test_stream_order_rules():
    s = Stream()
    with pytest.raises(ProtocolError, match="line 1: sample event before start"):
        s.feed(line(sample(0)))

    s = Stream()
    s.feed(line(START))
    with pytest.raises(ProtocolError, match="second start"):
        s.feed(line(START))

    s = Stream()
    s.feed(line(START))
    s.feed(line(sample(0)))
    with pytest.raises(ProtocolError, match="seq 2 where 1 was expected"):
        s.feed(line(sample(2)))

    s = Stream()
    s.feed(line(START))
    s.feed(line(END))
    with pytest.raises(ProtocolError, match="after the last event"):
        s.feed(line(sample(0)))


def test_error_event_alone_is_a_complete_stream():
    s = Stream()
    s.feed(line({"v": 1, "type": "error", "code": "bad_param", "message": "threads: 0 is below 1"}))
    assert s.closed and s.error["code"] == "bad_param"


def test_missing_end_leaves_stream_open():
    s = Stream()
    s.feed(line(START))
    s.feed(line(sample(0)))
    assert not s.closed and s.end is None


def test_sample_cap():
    s = Stream(max_samples=2)
    s.feed(line(START))
    s.feed(line(sample(0)))
    s.feed(line(sample(1)))
    with pytest.raises(ProtocolError, match="more than 2 samples"):
        s.feed(line(sample(2)))


def test_sample_for_api_keeps_the_api_fields():
    base = {"seq": 3, "t": 5.0, "interval_s": 1.0, "threads": 1, "repeat": 1, "warmup": False,
            "value": 5.5, "unit": "GFLOP/s"}
    assert sample_for_api(parse_line(line(sample(3, op="fp64", extra=1)))) == {**base, "op": "fp64"}
    assert sample_for_api(parse_line(line(sample(3, block_bytes=8192)))) == {**base, "block_bytes": 8192}
    assert sample_for_api(parse_line(line(sample(3, block_bytes="8K")))) == base


def test_result_needs_verified():
    res = {"v": 1, "type": "result", "threads": 1, "repeat": 1, "value": 5.0, "unit": "GFLOP/s"}
    with pytest.raises(ProtocolError, match="result event without 'verified'"):
        parse_line(line(res))


@pytest.mark.parametrize("obj, message", [
    ({"v": 1, "type": "result", "threads": 0, "repeat": 1, "value": 5.0, "unit": "GFLOP/s", "verified": True},
     "result.threads 0 outside the kernels' declared 1..256"),
    ({"v": 1, "type": "result", "threads": 257, "repeat": 1, "value": 5.0, "unit": "GFLOP/s", "verified": True},
     "result.threads 257 outside the kernels' declared 1..256"),
    ({"v": 1, "type": "result", "threads": 1, "repeat": 0, "value": 5.0, "unit": "GFLOP/s", "verified": True},
     "result.repeat 0 outside the kernels' declared 1..1000"),
    (sample(0, threads=4096), "sample.threads 4096 outside the kernels' declared 1..256"),
    ({**RESULT, "cpu_share": 1.5}, r"result.cpu_share 1.5 outside the kernels' declared 0\.\.1"),
    ({**RESULT, "wait_share": -0.25}, r"result.wait_share -0.25 outside the kernels' declared 0\.\.1"),
    ({**RESULT, "tries": 0}, "result.tries 0 outside the kernels' declared >= 1"),
    ({**RESULT, "preemptions": -1}, "result.preemptions -1 outside the kernels' declared >= 0"),
    ({**RESULT, "loss_pct": 100.5}, r"result.loss_pct 100.5 outside the kernels' declared 0\.\.100"),
    ({**RESULT, "clock_after_ghz": 0}, "result.clock_after_ghz 0 outside the kernels' declared > 0"),
    ({**RESULT, "latency_us": {"avg": 1.0, "p50": -2.0}}, "result.latency_us.p50 -2.0 outside the kernels' declared"),
])
def test_bounds_read_from_the_declaration(obj, message):
    """A result or sample line's fields lie within the ranges the kernels declare beside them (`--describe`
    "results": threads within the threads/streams parameter, repeat within max_repeats, a share 0..1, a count
    >= 0, a clock > 0, an object's members too); the runner's check reads them from there (resultfields)."""
    with pytest.raises(ProtocolError, match=message):
        parse_line(line(obj))
    assert parse_line(line(sample(0, repeat=0, warmup=True)))["repeat"] == 0  # the warm-up phase is repeat 0


def test_a_declared_range_takes_its_edges_and_null():
    """0 and 1 are shares, null is a figure not known, and the measured value itself has no range."""
    for figures in ({"cpu_share": 1.0, "wait_share": 0.0, "tries": 1, "loss_pct": 100.0},
                    {"cpu_share": None, "clock_after_ghz": None, "latency_us": {"p50": 0.0, "max": None}},
                    {"value": -1.0}):
        assert parse_line(line({**RESULT, **figures}))["type"] == "result"
