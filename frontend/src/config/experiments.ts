// Per-experiment UI facts that the parameter schema does not carry. Adding an experiment (memory,
// disk, network, GPU) means adding one entry here; the parameter form itself is generated.

type Params = Record<string, unknown>;

function num(v: unknown, fallback = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** Estimated wall time before submit; the backend's expected_duration_s is authoritative after. */
export const durationEstimators: Record<string, (p: Params) => number> = {
  cpu: (p) => (Array.isArray(p.threads) ? p.threads.length : 0) * (num(p.warmup_s) + num(p.repeats) * num(p.duration_s)),
  cpu_trace: (p) => num(p.duration_s),
};

/** Display labels for enum values (the schema carries only the raw values). */
export const enumLabels: Record<string, Record<string, string>> = {
  op: { fp64: 'FP64 FLOPS', fp32: 'FP32 FLOPS', int32: 'Integer ops (INT32)' },
};

/** Field labels where a humanised parameter name would read badly. */
export const fieldLabels: Record<string, string> = {
  warmup_s: 'Warm-up (s)',
};

/** Names of peaks in HostPublic.peaks, for display. Unknown keys are shown humanised. */
export const peakLabels: Record<string, string> = {
  cpu_fp64: 'FP64',
  cpu_fp32: 'FP32',
  cpu_int32: 'INT32',
  memory_bw: 'Memory bandwidth',
  disk_bw: 'Disk bandwidth',
  nic_bw: 'NIC bandwidth',
  gpu_fp32: 'GPU FP32',
  gpu_fp64: 'GPU FP64',
  gpu_bw: 'GPU memory bandwidth',
  fp64_gflops: 'FP64',
  fp32_gflops: 'FP32',
};

/** Reference tools as their authors write them (the API gives the runner's lower-case key). */
export const referenceToolLabels: Record<string, string> = {
  hpl: 'HPL',
  hpcc: 'HPCC',
  linpack: 'LINPACK',
  stream: 'STREAM',
  fio: 'fio',
  iozone: 'IOzone',
  iperf3: 'iperf3',
  iperf2: 'iperf2',
  ping: 'ping',
  sockperf: 'sockperf',
  likwid: 'likwid-bench',
};
