"""The injected faults of `./hostbench faults` on their own (as root): every host's link has a token bucket on both
ends of its veth (a 1 GbE NIC's rate; the shaped link's a tenth of it), every namespace reaches the bridge over TCP (or the setup fails within its bound, naming it), the
throttled disk writes no faster than DISK_BPS through O_DIRECT; and how a check's verdicts are scored."""
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


def test_a_shaped_link_and_a_throttled_disk(root_only, tmp_path):
    hosts = faults.plan(2, {1: "link"}, tmp_path, tag="fltt", subnet=89)  # beside a fault fleet of the backend test
    with faults.network(hosts):
        for h, mbit in ((hosts[0], faults.HOST_LINK_MBIT), (hosts[1], faults.LINK_MBIT)):  # every host's NIC; a tenth
            rate = f"{mbit // 1000}Gbit" if mbit % 1000 == 0 else f"{mbit}Mbit"  # as tc prints it
            for ns, dev in ((None, h.outer), (h.ns, h.inner)):  # both ends of its veth
                out = subprocess.run([*(["nsenter", f"--net=/var/run/netns/{ns}"] if ns else []), "tc", "qdisc",
                                      "show", "dev", dev], capture_output=True, text=True).stdout
                assert "tbf" in out and f"rate {rate} " in out, out
        r = subprocess.run(["ip", "netns", "exec", hosts[0].ns, "ping", "-c", "1", "-W", "5", hosts[1].ip],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr  # the two "hosts" reach each other over the bridge
        # a namespace that cannot reach the bridge over TCP fails the setup (network() ends with this check) within
        # its bound, naming the host, instead of a runner that hangs (its link cut here; once, the SYN-ACKs were lost
        # while ping worked)
        subprocess.run(["ip", "link", "set", hosts[1].outer, "down"], check=True)
        t0 = time.monotonic()
        with pytest.raises(RuntimeError, match=rf"{hosts[1].name} \(namespace {hosts[1].ns}\) cannot open a TCP "
                                               rf"connection to the bridge's {hosts[1].bridge_ip} within 2 s"):
            faults.tcp_reachable(hosts, within_s=2)
        assert time.monotonic() - t0 < 15
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
    # the quota host's disk figure not judged (cpu_bound): its FAIL on CPU alone is right
    assert rows({cpu: ("FAIL", [fig("cpu"), fig("disk", "not_judged")])})[cpu] is True
    assert faults.expected_figures("cpu") == {"cpu", "cpu_trace", "memory"}  # the CPU-bound run kinds
    assert rows({link: ("DISTURBED", [fig("network_drive", "disturbed")])})[link] is None
