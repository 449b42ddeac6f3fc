"""The injected faults of `./hostbench faults` on their own (as root): the shaped link has its token bucket on both
ends of its veth, the throttled disk writes no faster than DISK_BPS through O_DIRECT, and the CPU-quota host gets a
CPU of its own."""
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from hostbench_harness import faults


@pytest.fixture
def root_only():
    why = faults.why_not()
    if why:
        pytest.skip(why)


def test_pinning_gives_the_cpu_host_a_cpu_of_its_own(tmp_path):
    hosts = faults.plan(4, {3: "cpu"}, tmp_path)
    pins = faults.pinning(hosts)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        assert pins == {}
        return
    assert pins[hosts[3].name] == cpus[-1:] and all(pins[h.name] == cpus[:-1] for h in hosts[:3])
    assert faults.pinning(faults.plan(3, {0: "disk"}, tmp_path)) == {}


def test_pinning_gives_every_host_cpus_of_its_own_when_there_are_enough(tmp_path):
    """9 runners (8 hosts and the link's peer) on 16 CPUs: one each, none shared; on 2, the scheme above."""
    hosts = faults.plan(9, {0: "cpu", 1: "disk", 2: "link"}, tmp_path)
    pins = faults.pinning(hosts, list(range(16)))
    assert [pins[h.name] for h in hosts] == [[i] for i in range(9)]
    pins = faults.pinning(hosts[:4], list(range(16)))
    assert [pins[h.name] for h in hosts[:4]] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    pins = faults.pinning(hosts, [0, 1])
    assert pins[hosts[0].name] == [1] and all(pins[h.name] == [0] for h in hosts[1:])


def test_a_shaped_link_and_a_throttled_disk(root_only, tmp_path):
    hosts = faults.plan(2, {1: "link"}, tmp_path, tag="fltt", subnet=89)  # beside a fault fleet of the backend test
    with faults.network(hosts):
        for h, shaped in ((hosts[0], False), (hosts[1], True)):
            out = subprocess.run(["tc", "qdisc", "show", "dev", h.outer], capture_output=True, text=True).stdout
            assert ("tbf" in out and f"{faults.LINK_MBIT}Mbit" in out) == shaped, out
        r = subprocess.run(["ip", "netns", "exec", hosts[0].ns, "ping", "-c", "1", "-W", "5", hosts[1].ip],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr  # the two "hosts" reach each other over the bridge
    assert subprocess.run(["ip", "netns", "pids", hosts[0].ns], capture_output=True).returncode != 0  # gone

    work = Path(tempfile.mkdtemp(dir=tmp_path))
    size = 2 * faults.DISK_BPS  # two seconds' worth at the throttle
    with faults.DiskLimit("test", faults.block_device(work), faults.DISK_BPS) as limit:
        t0 = time.monotonic()
        dd = f"read x; exec dd if=/dev/zero of=f bs=1M count={size // 2**20} oflag=direct"
        p = subprocess.Popen(["sh", "-c", dd], cwd=work, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        limit.add(p.pid)
        _, err = p.communicate("go\n", timeout=120)
        took = time.monotonic() - t0
    assert p.returncode == 0, err
    assert took >= 1.5, f"{size} B written in {took:.2f} s: faster than the throttle allows ({err.strip()})"


def test_score_right_and_wrong_verdicts(tmp_path):
    """A bad host is right to FAIL on its fault's figures only (a CPU quota's: CPU and memory), wrong to PASS; an
    undisturbed host is wrong to FAIL; DISTURBED is neither."""
    hosts = faults.plan(4, {0: "cpu", 1: "link"}, tmp_path)

    def fig(experiment: str, status: str = "fail") -> dict:
        return {"figure": {"experiment": experiment, "op": "x"}, "status": status, "reason": "r"}

    def rows(verdicts: dict[str, tuple[str, list[dict]]]) -> dict[str, bool | None]:
        check = {"hosts": [{"host_name": h.name, "verdict": verdicts.get(h.name, ("PASS", []))[0],
                            "figures": verdicts.get(h.name, ("PASS", []))[1], "reason": ""} for h in hosts]}
        return {r["host"]: r["right"] for r in faults.score(hosts, {}, check)}

    cpu, link, ok1, ok2 = (h.name for h in hosts)
    got = rows({cpu: ("FAIL", [fig("cpu"), fig("memory")]), link: ("FAIL", [fig("network_drive")]),
                ok2: ("DISTURBED", [fig("cpu", "disturbed")])})
    assert got == {cpu: True, link: True, ok1: True, ok2: True}
    got = rows({cpu: ("FAIL", [fig("cpu"), fig("disk")]), link: ("PASS", []), ok1: ("FAIL", [fig("memory")])})
    assert got == {cpu: False, link: False, ok1: False, ok2: True}
    assert rows({link: ("DISTURBED", [fig("network_drive", "disturbed")])})[link] is None
