"""Suites in the experiment table's terms: which jobs a suite makes on the hosts picked, and its duration."""
import pytest

from hostbench_common.experiments import EXPERIMENTS
from hostbench_common.suites import BUILTIN, BUSY_EACH, QUICK_EACH, HostInfo, Item, PlannedJob, job_duration, plan
from hostbench_common.suites import expected_duration as suite_duration


def test_every_item_names_an_experiment_and_only_its_parameters():
    for suite in BUILTIN.values():
        assert suite.title and suite.items
        for item in suite.items:
            e = EXPERIMENTS[item.experiment]
            assert set(item.params) <= set(e.api_schema()["properties"]), (suite.id, item)


def test_one_host_items_run_on_every_host_picked_and_two_host_items_need_two():
    jobs, skipped = plan(BUILTIN["full"].items, [HostInfo(7)])
    assert all(j.host_ids == [7] for j in jobs)
    assert not any(j.experiment == "network_pair" for j in jobs)
    assert sum("needs 2 hosts" in s for s in skipped) == 4
    jobs, _ = plan(BUILTIN["full"].items, [HostInfo(7), HostInfo(9), HostInfo(11)])
    pairs = [j for j in jobs if j.experiment == "network_pair"]
    assert len(pairs) == 4 and all(j.host_ids == [7, 9] for j in pairs)
    assert next(j for j in jobs if j.experiment == "cpu").host_ids == [7, 9, 11]


def test_with_a_peer_every_host_picked_drives_to_it_and_the_peer_runs_nothing_else():
    jobs, skipped = plan(BUILTIN["full"].items, [HostInfo(7)], peer=HostInfo(3))
    pairs = [j for j in jobs if j.experiment == "network_pair"]
    assert len(pairs) == 4 and all(j.host_ids == [3, 7] for j in pairs)  # the peer serves, the host picked drives
    assert all(j.host_ids == [7] for j in jobs if j.experiment != "network_pair")
    assert not any("needs 2 hosts" in s for s in skipped)
    jobs, _ = plan(BUILTIN["full"].items, [HostInfo(7), HostInfo(9)], peer=HostInfo(3))
    assert [j.host_ids for j in jobs if j.experiment == "network_pair"][:2] == [[3, 7], [3, 9]]
    with pytest.raises(ValueError, match="peer too"):
        plan(BUILTIN["full"].items, [HostInfo(7)], peer=HostInfo(7))


def test_a_gpu_item_runs_only_where_the_inventory_lists_a_gpu():
    hosts = [HostInfo(1, {"cpu": {}}), HostInfo(2, {"gpus": [{"name": "H100"}]}), HostInfo(3, {"gpus": []})]
    jobs, _ = plan(BUILTIN["full"].items, hosts)
    assert [j.host_ids for j in jobs if j.experiment == "gpu"] == [[2]]
    jobs, skipped = plan(BUILTIN["full"].items, hosts[:1])
    assert not any(j.experiment == "gpu" for j in jobs)
    assert any("no host with a GPU" in s for s in skipped)


def test_a_suite_lasts_the_sum_of_its_jobs():
    items = (Item("cpu", {"op": ["fp64", "fp32"], "threads": [1, 2], "repeats": 1, "duration_s": 2, "warmup_s": 0}),
             Item("cpu_trace", {"duration_s": 30}))
    jobs, _ = plan(items, [HostInfo(1), HostInfo(2)])
    assert [job_duration(j.experiment, j.params) for j in jobs] == [2 * 2 * 2, 30]
    assert suite_duration(jobs) == 38


def test_the_quick_health_check_takes_about_a_minute():
    jobs, skipped = plan(BUILTIN["quick"].items, [HostInfo(1)])
    assert not skipped and {j.experiment for j in jobs} == {"cpu", "memory", "disk", "network"}
    # on a quiet host (no wait, no try repeated); the cap adds each phase's wait and retries (QUICK_EACH's)
    quiet = [PlannedJob(j.experiment, j.host_ids, {k: v for k, v in j.params.items() if k not in BUSY_EACH})
             for j in jobs]
    assert 30 <= suite_duration(quiet) <= 75  # measured: 47-52 s a host in the 8-host fault table (verdicts.md)
    rows = 16  # cpu 2 ops x 2 threads, memory copy, triad and latency at 2 sizes, disk 3 ops x 2 blocks, network 2 ops
    phases = rows * QUICK_EACH["repeats"]
    wait, retries = QUICK_EACH["quiet_wait_s"], QUICK_EACH["disturbed_retries"]
    assert suite_duration(jobs) == suite_duration(quiet) + phases * (wait + retries * QUICK_EACH["duration_s"])



def test_every_suite_disk_item_measures_the_device():
    """Direct I/O on every disk item, at blocks direct I/O can move (multiples of 4096: every row io_mode "direct"),
    so that a suite's disk figures are the device's and never the page cache's (issue 26: the Quick health check
    reported 1,808 MB/s of 4 KiB reads from the cache)."""
    items = [(s.id, i) for s in BUILTIN.values() for i in s.items if i.experiment == "disk"]
    assert {sid for sid, _ in items} == {"quick", "standard", "burn-in", "full"}
    for sid, item in items:
        assert item.params.get("direct") is True, sid
        assert all(b % 4096 == 0 for b in item.params["blocks"]), sid
