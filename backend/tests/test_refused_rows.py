"""Rows a kernel refused on this host (its start event's `refused`) come with the run's result, each with its
reason, beside the rows that ran (issue 26: a memory latency run was refused whole when one size did not fit)."""
from app.results.service import compute_result

REASON = ("latency, 1 GiB per thread at 8 threads: needs 8.5 GiB (the cycles and, while they are built, their "
          "permutations), more than 90 % of the 5.2 GiB this host has available (MemAvailable); at 8 threads up to "
          "512 MiB per thread fits")


def test_refused_rows_are_listed_with_their_reason_and_the_others_stay():
    raw = [{"threads": 1, "repeat": 1, "verified": True, "value": 300.0, "unit": "Mload/s", "op": "latency",
            "block_bytes": 4096}]
    info = {"refused": [{"op": "latency", "block_bytes": 1 << 30, "threads": 8, "reason": REASON},
                        {"op": "latency", "threads": "x", "reason": 3}]}  # not well formed: left out
    result = compute_result("memory", {"op": "latency"}, raw, info, {})
    assert len(result.rows) == 1 and result.rows[0].block_bytes == 4096
    assert [(r.op, r.threads, r.block_bytes, r.reason) for r in result.refused] == [("latency", 8, 1 << 30, REASON)]
    assert compute_result("memory", {"op": "latency"}, raw, {}, {}).refused is None
