"""Issue "one definition of each thing": a result row carries the unit of each extra figure, and which are latencies,
as the kernel that wrote it declares them (`hbk <kernel> --describe` "results", the describe snapshot), under the
names the flattening gives them. Nothing is guessed from a key's spelling."""
from types import SimpleNamespace

from hostbench_common.describe import DESCRIBE

from app.jobs.stored import stored_result
from app.results.service import compute_result, declared_figures


def _rep(repeat: int, **extra: object) -> dict:
    return {"type": "result", "v": 1, "threads": 1, "repeat": repeat, "value": 100.0 + repeat, "unit": "Mbit/s",
            "work": 10, "seconds": 1.0, "verified": True, "oversubscribed": False, "cpu_share": 0.99,
            "preemptions": 3, "t": 1.0, **extra}


def test_a_round_trip_row_says_its_latencies_are_microseconds_and_lower_is_better():
    lat = {"avg": 30.0, "p50": 28.0, "p99": 55.0, "min": 20.0, "max": 90.0}
    res = compute_result("network", {"op": "tcp_rr"}, [_rep(1, op="tcp_rr", round_trips=9, latency_us=lat),
                                                       _rep(2, op="tcp_rr", round_trips=9, latency_us=lat)], {}, {})
    row = res.rows[0]
    assert row.extra["latency_p99_us"] == 55.0  # the keys are the flattened ones, as before
    assert row.extra_units == {"cpu_share": "", "latency_avg_us": "µs", "latency_max_us": "µs",
                               "latency_min_us": "µs", "latency_p50_us": "µs", "latency_p99_us": "µs",
                               "preemptions": "", "round_trips": ""}
    assert row.extra_lower_is_better == ["latency_avg_us", "latency_max_us", "latency_min_us", "latency_p50_us",
                                         "latency_p99_us"]


def test_a_sender_rate_is_mbit_per_second_not_a_time():
    res = compute_result("network", {"op": "tcp_stream"},
                         [_rep(1, op="tcp_stream", sender_mbit_s=23018.4, sender_bytes=1, receiver_bytes=1)], {}, {})
    row = res.rows[0]
    assert (row.extra_units["sender_mbit_s"], row.extra_units["sender_bytes"]) == ("Mbit/s", "B")
    assert row.extra_lower_is_better == []


def test_disk_memory_and_gpu_units_come_from_their_kernels():
    disk = declared_figures("disk")
    assert disk["iops"] == ("IOPS", False) and disk["lat_p999_us"] == ("µs", True)
    assert declared_figures("memory")["ns_per_load"] == ("ns", True)
    gpu = declared_figures("gpu")
    assert gpu["plan_launch_ms"] == ("ms", False) and gpu["plan_buffer_bytes"] == ("B", False)
    assert gpu["sm_clock_mhz"] == ("MHz", False) and "plan" not in gpu and "pcie_link" not in gpu
    assert declared_figures("cpu_trace")["clock_after_ghz"] == ("GHz", False)
    assert declared_figures("no_such_kind") == {}


def test_every_declared_numeric_figure_has_a_unit_entry():
    for kind in ("cpu", "memory", "disk", "network", "gpu"):
        declared = declared_figures(kind)
        assert declared and all(isinstance(u, str) for u, _ in declared.values())
    assert all("results" in d for d in DESCRIBE.values())


def test_a_key_the_kernel_does_not_declare_has_no_unit():
    res = compute_result("network", {"op": "tcp_stream"}, [_rep(1, op="tcp_stream", mystery_s=4.0)], {}, {})
    assert res.rows[0].extra["mystery_s"] == 4.0 and "mystery_s" not in res.rows[0].extra_units


def test_a_result_stored_without_units_gets_them_when_read():
    res = compute_result("disk", {"op": "rand_read"}, [_rep(1, op="rand_read", block_bytes=4096, iops=5.0,
                                                           lat_p99_us=80.0)], {}, {})
    stored = res.model_dump(mode="json")
    for row in stored["rows"]:
        del row["extra_units"], row["extra_lower_is_better"]
    run = SimpleNamespace(result=stored, raw_results=None, experiment="disk")
    row = stored_result(run).rows[0]  # type: ignore[union-attr]
    assert row.extra_units["lat_p99_us"] == "µs" and row.extra_units["iops"] == "IOPS"
    assert row.extra_lower_is_better == ["lat_p99_us"]
