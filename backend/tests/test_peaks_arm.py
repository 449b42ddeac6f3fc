"""The ARM core found from /proc/cpuinfo's "CPU implementer" / "CPU part" as the runner parses them, and its
peak through the API's peaks (app.hosts.peaks). Each core's per-core FLOP/cycle against the figure its vendor
publishes: common/tests/test_peaks_arm.py."""
import pytest
from hostbench_runner.inventory import cpu as runner_cpu

from app.hosts.peaks import cpu_peak, microarch

GRAVITON3_CPUINFO = "".join(
    f"processor\t: {i}\nBogoMIPS\t: 2100.00\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma "
    "lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp "
    "svei8mm svebf16 i8mm bf16 dgh rng\n"
    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\n"
    "CPU revision\t: 1\n\n"
    for i in range(2))
AMPEREONE_CPUINFO = ("processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n"
                     "CPU implementer\t: 0xc0\nCPU architecture: 8\nCPU variant\t: 0x0\n"
                     "CPU part\t: 0xac3\n\n")


def test_arm_core_is_found_from_proc_cpuinfo():
    topology = {"cpu0": {"package": "0", "core": "0"}, "cpu1": {"package": "0", "core": "1"}}
    g3 = runner_cpu.parse({"cpuinfo": GRAVITON3_CPUINFO, "topology": topology, "caches": [], "online": "0-1"})
    assert (g3["vendor"], g3["family"], g3["model_number"], g3["best_isa"]) == ("ARM", None, 0xD40, "sve")
    assert microarch(g3).name == "Neoverse V1"
    inv = {"cpu": {**g3, "cores_per_socket": g3["cores"] // g3["sockets"]}}
    peak, why = cpu_peak(inv, "fp64", 2, None, 2.6)  # no isa from a run: the inventory's best
    assert why is None and peak.value == pytest.approx(2 * 2.6 * 16) and "Neoverse V1" in peak.formula
    one = runner_cpu.parse({"cpuinfo": AMPEREONE_CPUINFO, "topology": {}, "caches": [], "online": "0"})
    assert (one["vendor"], one["model_number"], one["best_isa"]) == ("Ampere", 0xAC3, "neon")
    assert microarch(one).name == "AmpereOne"
