// The dashboard's display vocabulary: how operations, enum values, fields, peaks, reference tools and run
// roles read to a person. Nothing here says what an experiment is: its parameters, which apply, its expected
// duration and its hosts come from GET /api/experiments (lib/experiments.ts reads them).

/** What a run does within its job, by its role (ExperimentPublic.roles), where that is more than "measures
 * on its host". */
export const roleLabels: Record<string, string> = {
  serve: 'serves',
  drive: 'drives',
};

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
  work: 'Fixed work per repeat (units; 0 = fixed duration)',
  quiet_wait_s: 'Wait for a quiet CPU before each phase, up to (s; 0 = off)',
  disturbed_retries: 'Measure a disturbed phase again, up to (times)',
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
