// Per-experiment UI facts that the parameter schema does not carry. Adding an experiment (memory,
// disk, network, GPU) means adding one entry here; the parameter form itself is generated.

type Params = Record<string, unknown>;

function num(v: unknown, fallback = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0);
/** One configuration: its warm-up, then its repeats. */
const phase = (p: Params) => num(p.warmup_s) + num(p.repeats) * num(p.duration_s);

/** The time the server adds per thread count for a job with reference tools on (backend
 * app/experiments/registry.py REFERENCE_ALLOWANCE_S: the same figure its expected_duration_s includes). */
export const REFERENCE_ALLOWANCE_S = 300;

/** The server's expected_duration_s for these parameters: the measuring time (durationEstimators) plus the
 * reference tools' allowance, at the worst case of repeat-until-stable (max_repeats), as the backend computes it. */
export function expectedDuration(kind: string, p: Params): { measuring: number; upTo: number; reference: number } | undefined {
  const est = durationEstimators[kind];
  if (!est) return undefined;
  const measuring = est(p);
  const stable = num(p.stable_cv) > 0 && num(p.max_repeats) > num(p.repeats);
  const worst = stable ? est({ ...p, repeats: p.max_repeats }) : measuring;
  const reference = p.reference === true ? REFERENCE_ALLOWANCE_S * Math.max(1, count(p.threads) || 1) : 0;
  return { measuring, upTo: worst + reference, reference };
}

/** Estimated wall time before submit (as the backend's registry computes it; its expected_duration_s
 * is authoritative once the job exists). */
export const durationEstimators: Record<string, (p: Params) => number> = {
  cpu: (p) => count(p.threads) * phase(p),
  cpu_trace: (p) => num(p.duration_s),
  memory: (p) => {
    const op = String(p.op ?? '');
    const configs = op === 'latency' ? count(p.sizes) : op.startsWith('stream_') ? 1 : count(p.blocks);
    return configs * count(p.threads) * phase(p);
  },
  disk: (p) => count(p.ops) * count(p.blocks) * count(p.threads) * phase(p),
  network: (p) => count(p.sizes) * count(p.streams) * phase(p),
  // Two hosts: the first serves, the second drives; the server runs for the drive's whole duration.
  network_pair: (p) => count(p.sizes) * count(p.streams) * phase(p),
  gpu: (p) => count(p.ops) * phase(p),
};

/** Whether a parameter applies to the op chosen (raw form values): the runner omits the others from the
 * kernel's argv (hostbench_runner/experiments.py, memory's omit), so the form does not ask for them. */
export function fieldApplies(kind: string, name: string, raw: Record<string, unknown>): boolean {
  if (kind !== 'memory') return true;
  const op = String(raw.op ?? '');
  if (name === 'blocks') return op !== 'latency' && !op.startsWith('stream_');
  if (name === 'sizes') return op === 'latency';
  return true;
}

/** Operations of every experiment, as people name them (the API gives the kernel's key). */
export const opLabels: Record<string, string> = {
  fp64: 'FP64 FLOPS',
  fp32: 'FP32 FLOPS',
  int32: 'Integer ops (INT32)',
  copy: 'Copy (read + write)',
  read: 'Sequential read',
  write: 'Sequential write',
  seq_read: 'Sequential read',
  seq_write: 'Sequential write',
  rand_read: 'Random read',
  rand_write: 'Random write',
  rw: 'Mixed read/write 50/50',
  stream_copy: 'STREAM Copy',
  stream_scale: 'STREAM Scale',
  stream_add: 'STREAM Add',
  stream_triad: 'STREAM Triad',
  stream_copy_nt: 'STREAM Copy (non-temporal)',
  stream_scale_nt: 'STREAM Scale (non-temporal)',
  stream_add_nt: 'STREAM Add (non-temporal)',
  stream_triad_nt: 'STREAM Triad (non-temporal)',
  latency: 'Load latency',
  tcp_stream: 'TCP throughput',
  udp_stream: 'UDP throughput',
  tcp_rr: 'TCP round trips',
  udp_rr: 'UDP round trips',
  fp32_fma: 'GPU FP32 FMA',
  fp64_fma: 'GPU FP64 FMA',
  dram_bw: 'GPU memory bandwidth',
  h2d: 'Host → device copy',
  d2h: 'Device → host copy',
};

/** Display labels for enum values, by parameter name (the schema carries only the raw values). */
export const enumLabels: Record<string, Record<string, string>> = {
  op: opLabels,
  ops: opLabels,
  poll: { blocking: 'Blocking receive', busy: 'Busy poll' },
};

/** Field labels where a humanised parameter name would read badly. */
export const fieldLabels: Record<string, string> = {
  warmup_s: 'Warm-up (s)',
  iodepth: 'I/O depth',
  blocks: 'Block sizes',
  stable_cv: 'Repeat until CV ≤ (0 = off)',
  file_size: 'File size',
  direct: 'Direct I/O (O_DIRECT)',
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
