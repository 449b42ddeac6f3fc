"""What a CPU peak is computed from besides the table: the clock (the kernel's before the run, the higher one right
after a phase; the vector-loaded one for FP ops at a vector width) and the inventory's typed view (a field of another type is left out, never read)."""

from __future__ import annotations

from hostbench_common.peaks import RunClock, cpu_peak, peak_clock_ghz, readable_inventory, run_clock_ghz


def test_the_clock_is_the_one_measured_for_the_thread_count_and_never_below_a_later_one():
    info = {"clock_ghz": 3.6, "clock_ghz_all_cpus": 3.3}
    assert run_clock_ghz(info, 1) == 3.6 and run_clock_ghz(info, 2) == 3.3
    assert run_clock_ghz({"clock_ghz": 3.6}, 2) == 3.6  # no all-CPU figure: the one-CPU clock
    assert run_clock_ghz({"clock_ghz": 0, "clock_ghz_all_cpus": "3"}, 2) is None
    assert peak_clock_ghz(info, 2, [{"clock_after_ghz": 3.5}, {"clock_after_ghz": 3.4}, {}]) == RunClock(3.5)
    assert peak_clock_ghz(info, 1, [{"clock_after_ghz": 3.5}]) == RunClock(3.6)
    assert peak_clock_ghz({}, 1, [{"clock_after_ghz": "fast"}]) is None


def test_the_vector_loaded_clock_follows_the_same_rule_and_is_never_mixed_with_the_scalar_one():
    info = {"clock_ghz": 4.0, "clock_ghz_all_cpus": 3.9, "clock_vector_ghz": 3.6, "clock_vector_ghz_all_cpus": 3.4}
    assert run_clock_ghz(info, 1, vector=True) == 3.6 and run_clock_ghz(info, 2, vector=True) == 3.4
    assert run_clock_ghz({"clock_vector_ghz": 3.6, "clock_vector_ghz_all_cpus": None}, 2, vector=True) == 3.6
    assert run_clock_ghz({"clock_ghz": 4.0, "clock_vector_ghz": None}, 1, vector=True) is None
    # before the run or after a phase, whichever is higher, of each kind on its own: the scalar chain's 4.0
    # never lifts the vector-loaded clock
    reps = [{"clock_after_ghz": 3.95, "clock_after_vector_ghz": 3.65}, {"clock_after_vector_ghz": True}, {}]
    assert peak_clock_ghz(info, 1, reps) == RunClock(4.0, 3.65)
    assert peak_clock_ghz(info, 2, reps) == RunClock(3.95, 3.65)
    assert peak_clock_ghz({"clock_vector_ghz": 3.5}, 1, []) == RunClock(None, 3.5)
    assert peak_clock_ghz({"clock_ghz": 4.0}, 1, [{"clock_after_vector_ghz": 0}]) == RunClock(4.0, None)


ZEN5 = {"cpu": {"vendor": "AuthenticAMD", "family": 0x1A, "model_number": 0x02, "sockets": 1, "cores_per_socket": 2,
                "isa": ["sse2", "avx", "fma", "avx2", "avx512f"], "best_isa": "avx512"}}


def test_an_fp_peak_at_a_vector_width_uses_the_vector_loaded_clock_and_says_which():
    # an Intel-like drop: 32 FLOP/cycle at 3.70 GHz, not at the scalar chain's 4.00
    peak, why = cpu_peak(ZEN5, "fp64", 1, "avx512", RunClock(4.0, 3.7))
    assert why is None and abs(peak.value - 32 * 3.7) < 1e-9
    assert "3.700 GHz (vector-loaded clock, AVX-512)" in peak.formula
    assert "scalar chain 4.000 GHz, vector-loaded 3.700 GHz (-7.5 %)" in peak.formula
    peak, _ = cpu_peak(ZEN5, "fp32", 2, "avx2", RunClock(4.0, 3.95))  # 1.3 % apart: the same clock
    assert abs(peak.value - 2 * 32 * 3.95) < 1e-9 and "(vector-loaded clock, AVX2)" in peak.formula
    assert "differ" not in peak.formula and "4.000" not in peak.formula
    peak, _ = cpu_peak(ZEN5, "fp64", 1, "avx512", RunClock(3.7, 3.9))  # a vector clock above: said too
    assert "(vector-loaded clock, AVX-512)" in peak.formula and "(+5.4 %)" in peak.formula


def test_int32_scalar_and_older_runs_use_the_scalar_chain_and_say_so():
    for op, isa in (("int32", "avx512"), ("fp64", "scalar")):
        peak, _ = cpu_peak(ZEN5, op, 1, isa, RunClock(4.0, 3.7))
        assert "× 4.000 GHz (scalar-chain clock) × " in peak.formula and "vector-loaded" not in peak.formula, peak.formula
    peak, _ = cpu_peak(ZEN5, "fp64", 1, "avx512", RunClock(4.0, None))  # a run from before the vector clock
    assert abs(peak.value - 32 * 4.0) < 1e-9
    assert "(scalar-chain clock, the run has no vector-loaded one)" in peak.formula
    peak, why = cpu_peak(ZEN5, "int32", 1, "avx512", RunClock(None, 3.7))  # nothing of its kind: not guessed
    assert peak is None and "clock unknown" in why
    peak, _ = cpu_peak({"cpu": {**ZEN5["cpu"], "max_mhz": 5000}}, "int32", 1, "avx512", RunClock(None, 3.7))
    assert peak.value == 16 * 4 * 5.0 and "cpufreq" in peak.formula


def test_the_typed_view_drops_what_is_not_of_its_type():
    raw = {"cpu": {"vendor": "AuthenticAMD", "family": 0x19, "model_number": "0x11", "sockets": True,
                   "cores_per_socket": 2, "max_mhz": -1, "isa": ["avx2", 5], "best_isa": "avx2", "other": 1,
                   "fma_probe": {"isa": {"avx2": {"flop_per_cycle": 16.0, "fma_units": 0, "cpu_share": 0.99,
                                                  "x": 1}, "avx512": "no"}}},
           "memory": [1], "disk": {}}
    assert readable_inventory(raw) == {"cpu": {
        "vendor": "AuthenticAMD", "family": 0x19, "cores_per_socket": 2, "best_isa": "avx2",
        "fma_probe": {"isa": {"avx2": {"flop_per_cycle": 16.0, "cpu_share": 0.99}}}}}
    assert readable_inventory(["cpu"]) == {}
    # the model number was a string: the row cannot be found, and nothing is guessed from the missing ISA flags
    peak, why = cpu_peak(readable_inventory(raw), "fp64", 1, "avx2", 3.0)
    assert peak is None and "not in the peak table" in why
