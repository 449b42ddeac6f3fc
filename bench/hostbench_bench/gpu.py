"""bench gpu: our CUDA kernel against the device's own limits, computed from what it reports.

- FP32 / FP64 FMA and int32 IMAD: vendor peak = SMs x results per clock per SM (the CUDA C++
  Programming Guide's throughput table, by compute capability) x 2 x the SM clock measured in the
  same repeat (clock64() cycles per %globaltimer ns of block 0 of the FMA launches). The peak at the
  boost clock the device reports is printed as a note.
- dram_bw (triad, 2 reads + 1 write per element counted): 2 x memory clock x bus width / 8 from
  cudaDeviceGetAttribute.
- h2d / d2h (pinned, cudaMemcpyAsync): the PCIe link's GT/s x lanes x line code / 8, read from sysfs
  right after the copies (informational: no bar).

Bars (issue 3, on a GPU host): fp32_fma >= 0.9 x peak at the measured clock; dram_bw >= 0.85 x
theoretical. On a host without a usable GPU this raises ToolMissing("no CUDA device: ...").
Nothing is installed.
"""
import json
import subprocess

from hostbench_bench.common import HBK, BenchReport, ToolMissing, hbk_events, interleave, results

DURATION_S = 5.0
PEAK_KEY = {"fp32_fma": "fp32_fma", "fp64_fma": "fp64_fma", "int32": "int32_imad"}


def probe() -> None:
    """Raises ToolMissing with hbk's own reason when this host cannot run the gpu kernel."""
    if not HBK.exists():
        raise ToolMissing(f"{HBK} is not built (make -C runner/kernels)")
    p = subprocess.run([str(HBK), "gpu", "--op", "fp32_fma", "--duration_s", "0.2", "--repeats", "1",
                        "--warmup_s", "0", "--no_sampler", "true"], capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    if p.returncode == 3:
        try:
            msg = json.loads(p.stdout.splitlines()[-1]).get("message", "")
        except (ValueError, IndexError):
            msg = p.stdout[-300:]
        raise ToolMissing(msg if msg.startswith("no CUDA device") else f"no CUDA device: {msg}")
    if p.returncode != 0:
        raise RuntimeError(f"hbk gpu exited {p.returncode}: {(p.stdout + p.stderr)[-600:]}")


class Ours:
    """One measured repeat of one op; keeps its start and result events for the reference side."""

    def __init__(self) -> None:
        self.start: dict = {}
        self.result: dict = {}

    def value(self, op: str) -> float:
        events = hbk_events("gpu", ["--op", op, "--repeats", "1", "--duration_s", str(DURATION_S),
                                    "--warmup_s", "1", "--no_sampler", "true"], timeout=600)
        res = results(events)
        if len(res) != 1 or not res[0]["verified"]:
            raise RuntimeError(f"hbk gpu --op {op}: no verified result: {res}")
        self.start, self.result = events[0], res[0]
        return res[0]["value"]


def peak_at_clock(start: dict, result: dict, op: str) -> float:
    lanes = start.get("lanes_per_sm", {}).get(PEAK_KEY[op])
    if not lanes:
        raise ToolMissing(f"{op}: results per clock per SM unknown for compute capability "
                          f"{start.get('compute_capability')}")
    mhz = result.get("sm_clock_mhz") or start.get("sm_clock_mhz")
    return start["sm_count"] * lanes * 2 * mhz / 1e3


def run(pairs: int) -> BenchReport:
    probe()
    report = BenchReport("gpu")
    ours = Ours()
    for op, unit in (("fp32_fma", "GFLOP/s"), ("fp64_fma", "GFLOP/s"), ("int32", "GIOP/s")):
        def ours_vs_peak(op: str = op) -> float:
            return ours.value(op)

        def peak(op: str = op) -> float:  # reads ours.start / ours.result when called: the repeat just measured
            return peak_at_clock(ours.start, ours.result, op)

        try:
            interleave(report, f"{op}_vs_peak", unit,
                       "SMs x lanes/SM (CUDA guide table) x 2 x SM clock measured in the same repeat",
                       ours_vs_peak, peak, pairs)
        except ToolMissing as exc:
            report.missing.append(str(exc))
        if ours.start.get("lanes_per_sm", {}).get(PEAK_KEY[op]) and ours.result.get("sm_clock_mhz"):
            boost = ours.start["sm_count"] * ours.start["lanes_per_sm"][PEAK_KEY[op]] * 2 * \
                ours.start["sm_clock_mhz_reported"] / 1e3
            report.notes.append(f"{op}: peak at the reported boost clock "
                                f"{ours.start['sm_clock_mhz_reported']:.0f} MHz = {boost:.0f} {unit}; "
                                f"last repeat ran at {ours.result.get('sm_clock_mhz'):.0f} MHz")
    interleave(report, "dram_bw_vs_theoretical", "GB/s",
               "2 x memory clock x bus width / 8 (cudaDeviceGetAttribute)",
               lambda: ours.value("dram_bw"), lambda: ours.start["dram_gbs_theoretical"], pairs)
    for op in ("h2d", "d2h"):
        def copies(op: str = op) -> float:
            return ours.value(op)

        def link(op: str = op) -> float:
            gbs = ours.result.get("pcie_gbs_theoretical")
            if not gbs:
                raise ToolMissing(f"{op}: the PCIe link speed is not in sysfs on this host")
            return gbs
        try:
            interleave(report, f"{op}_vs_pcie_link", "GB/s",
                       "PCIe GT/s x lanes x line code / 8 (sysfs, after the copies)",
                       copies, link, pairs)
        except ToolMissing as exc:
            report.missing.append(str(exc))
            report.notes.append(f"{op}: ours {ours.result.get('value', 0):.2f} GB/s, nothing to compare it with")
    s = ours.start
    report.notes.append(f"device {s.get('name')} (compute capability {s.get('compute_capability')}, "
                        f"{s.get('sm_count')} SMs, {s.get('code_used')}), driver CUDA {s.get('driver_cuda_version')}; "
                        f"our kernel: "
                        f"{DURATION_S:.0f} s per measurement after 1 s warm-up; bars: fp32_fma >= 0.9, dram_bw >= 0.85")
    return report
