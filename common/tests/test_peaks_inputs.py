"""What a CPU peak is computed from besides the table: the clock (the kernel's before the run, the higher one right
after a phase) and the inventory's typed view (a field of another type is left out, never read)."""

from __future__ import annotations

from hostbench_common.peaks import cpu_peak, peak_clock_ghz, readable_inventory, run_clock_ghz


def test_the_clock_is_the_one_measured_for_the_thread_count_and_never_below_a_later_one():
    info = {"clock_ghz": 3.6, "clock_ghz_all_cpus": 3.3}
    assert run_clock_ghz(info, 1) == 3.6 and run_clock_ghz(info, 2) == 3.3
    assert run_clock_ghz({"clock_ghz": 3.6}, 2) == 3.6  # no all-CPU figure: the one-CPU clock
    assert run_clock_ghz({"clock_ghz": 0, "clock_ghz_all_cpus": "3"}, 2) is None
    assert peak_clock_ghz(info, 2, [{"clock_after_ghz": 3.5}, {"clock_after_ghz": 3.4}, {}]) == 3.5
    assert peak_clock_ghz(info, 1, [{"clock_after_ghz": 3.5}]) == 3.6
    assert peak_clock_ghz({}, 1, [{"clock_after_ghz": "fast"}]) is None


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
