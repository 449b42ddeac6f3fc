"""How each area is measured, in one paragraph: the report's methodology section, from one place. Each paragraph is
a summary of docs/methodology/<area>.md (cited with it), not a second account of it; change the doc first."""
from typing import Literal

Area = Literal["cpu", "memory", "disk", "network", "gpu"]
AREAS: tuple[Area, ...] = ("cpu", "memory", "disk", "network", "gpu")
AREA_TITLES: dict[Area, str] = {"cpu": "CPU", "memory": "Memory", "disk": "Disk", "network": "Network", "gpu": "GPU"}
# Which area a kernel's figures belong to (hostbench_common.experiments: Run.kernel).
KERNEL_AREA: dict[str, Area] = {"cpu": "cpu", "memory": "memory", "disk": "disk", "net": "network", "gpu": "gpu"}

STATISTICS = (
    "Every configuration runs one warm-up phase, never counted, then its measured repeats; each repeat yields one "
    "figure, total work over the repeat's wall time. Tables give the mean ± the sample standard deviation over the "
    "repeats and the 95 % confidence interval of the mean (Student's t); efficiency is the mean over the theoretical "
    "peak shown with its arithmetic. A figure is called valid only when nothing is known against it; otherwise its "
    "flags say why in words (oversubscribed, disturbed, throttled, CPU lost, above the peak, unverified).")

METHODOLOGY: dict[Area, str] = {
    "cpu": (
        "hbk cpu runs independent chains of vector FMAs (FP64, FP32) or int32 vector adds per thread, pinned one "
        "thread per CPU, and verifies that every counted operation happened. Its peak is cores × clock × operations "
        "per cycle (vector lanes × FMA units × 2 for an FMA), with the clock measured under load at the start of the "
        "run; a figure more than 3 % above it is flagged invalid, never clipped. A trace runs the same loop for a "
        "long phase and marks stretches where the rate fell while the kernel kept its CPUs (throttled) or lost them "
        "(CPU lost)."),
    "memory": (
        "hbk memory times block operations (copy, read, write, random read and write) and the STREAM kernels over "
        "working sets from inside L1 to far beyond the last-level cache, per thread count, in MB/s (10^6 bytes per "
        "second, as STREAM prints them); a dependent-load chain gives the latency per working-set size, each size "
        "labelled with the cache it fits in. Bandwidth is set against the DIMMs' channels × transfer rate × 8 "
        "bytes where the firmware reports them (or a peak a person entered); latency has a floor, not a peak."),
    "disk": (
        "hbk disk reads and writes a test file of its own in the runner's work directory: sequential and random "
        "reads and writes and a 50/50 mix, direct (O_DIRECT, the default: the device's figures) or buffered, one I/O "
        "at a time per thread or many in flight (io_uring or Linux AIO), giving MB/s, IOPS and latency percentiles "
        "per block size; each row says how its I/O went (direct, through the page cache with the cache dropped, or "
        "buffered). The content is checked, and fio is run in the same mode with matched parameters as the "
        "reference. Disks report no throughput specification: "
        "a figure has a peak only where a person entered one for the host."),
    "network": (
        "hbk net measures TCP and UDP throughput, round-trip rate and UDP loss between two ends of one binary: over "
        "the loopback of one host, or between two hosts (one serving, one driving). Throughput is set against the "
        "link speed a person entered for the host (none for the loopback, which measures the network stack); "
        "iperf3, sockperf and ping run with matched parameters "
        "as the references."),
    "gpu": (
        "hbk gpu measures one CUDA device: FP32 and FP64 FMA and int32 throughput, the device-memory triad and "
        "host-device copies, each verified. Peaks are computed from what the device reports about itself (SMs × "
        "clock × operations per cycle, memory bus width × clock, the PCIe link), with the clock measured in the same "
        "repeat."),
}


def source(area: Area) -> str:
    return f"docs/methodology/{area}.md"
