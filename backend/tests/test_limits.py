"""Peaks beyond the CPU, and latencies below physics flagged invalid with the reason."""
from app.results.service import compute_result


def _row(experiment, params, result, info=None, inventory=None, overrides=None):
    res = [{"threads": 1, "repeat": 1, "verified": True, **result}]
    return compute_result(experiment, params, res, info or {}, inventory or {}, None, overrides).rows[0]


def test_memory_peak_from_channels_and_transfer_rate():
    row = _row("memory", {"op": "copy"}, {"value": 40000.0, "unit": "MB/s", "op": "copy", "block_bytes": 8192},
               inventory={"memory": {"channels": 2, "speed_mts": 4800}})
    assert row.peak.value == 2 * 4800 * 8 and row.peak.formula == "2 channels × 4800 MT/s × 8 bytes"
    assert abs(row.efficiency - 40000 / 76800) < 1e-12


def test_memory_peak_unknown_says_how_to_enter_it():
    result = compute_result("memory", {"op": "copy"}, [{"threads": 1, "repeat": 1, "verified": True, "value": 1.0,
                                                        "unit": "MB/s", "op": "copy"}], {}, {})
    assert result.rows[0].peak is None and "on the Hosts page (Peaks: Enter)" in result.peak_note  # the button, not an API call


def test_memory_above_a_user_entered_peak_is_invalid():
    row = _row("memory", {"op": "copy"}, {"value": 90000.0, "unit": "MB/s", "op": "copy"},
               overrides={"memory_bw": {"value": 60000.0, "unit": "MB/s"}})
    assert not row.valid and "above the theoretical peak" in row.invalid_reason


def test_latency_below_physics_is_invalid():
    row = _row("memory", {"op": "latency"}, {"value": 5000.0, "unit": "Mload/s", "op": "latency", "ns_per_load": 0.2})
    assert not row.valid and "below the physical floor" in row.invalid_reason
    rtt = _row("network", {"op": "tcp_rr"}, {"value": 9e6, "unit": "RT/s", "op": "tcp_rr", "latency_us": {"p50": 0.1}})
    assert not rtt.valid and "latency_p50_us" in rtt.invalid_reason


def test_disk_floor_applies_to_direct_io_only():
    fast = {"value": 5000.0, "unit": "MB/s", "op": "rand_read", "lat_p50_us": 0.4}
    assert _row("disk", {"direct": False}, fast).valid  # the page cache answers in well under a microsecond
    assert not _row("disk", {"direct": True}, fast).valid


def test_gpu_peak_is_the_one_the_device_reports_at_the_measured_clock():
    info = {"peak_at_measured_clock": {"fp32_gflops": 60000.0}, "peak_formula": "sm_count x lanes x 2 x clock"}
    row = _row("gpu", {}, {"value": 55000.0, "unit": "GFLOP/s", "op": "fp32_fma"}, info=info)
    assert (row.peak.value, row.peak.source) == (60000.0, "reported") and row.valid
