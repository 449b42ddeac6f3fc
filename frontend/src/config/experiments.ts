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

/** Field labels where a humanised parameter name would read badly, by parameter name, or by "experiment.name"
 * where one name means different things (memory's sizes are working sets, network's are messages). */
export const fieldLabels: Record<string, string> = {
  op: 'Operation',
  // a job's fan-out parameter: checkboxes, one run per operation ticked
  'cpu.op': 'Operations',
  'cpu_trace.op': 'Operations',
  'memory.op': 'Operations',
  'network.op': 'Operations',
  ops: 'Operations',
  isa: 'Instruction set',
  warmup_s: 'Warm-up (s)',
  max_repeats: 'At most (repeats, while repeating until stable)',
  iodepth: 'I/O depth',
  blocks: 'Block sizes',
  stable_cv: 'Repeat until CV ≤ (0 = off)',
  file_size: 'File size',
  direct: 'Direct I/O (O_DIRECT)',
  target: 'Where the test file goes',
  work: 'Fixed work per repeat (units; 0 = fixed duration)',
  quiet_wait_s: 'Wait for a quiet CPU before each phase, up to (s; 0 = off)',
  disturbed_retries: 'Measure a disturbed phase again, up to (times)',
  reference: 'Also run the reference tools',
  hpl_n: 'HPL matrix size N (0 = sized for you)',
  buffer_bytes: 'Buffer size (0 = 4 × L3)',
  array_size: 'STREAM array length (elements; 0 = 4 × L3)',
  allow_cache: 'Allow data that fits in a cache',
  'memory.sizes': 'Working-set sizes',
  'network.sizes': 'Message sizes',
  'network_pair.sizes': 'Message sizes',
  poll: 'Waiting for a reply',
  device: 'GPU (CUDA device number)',
  bytes: 'Buffer size (0 = picked for you)',
};

/** Help under a field, in a user's words, by parameter name or "experiment.name" (as fieldLabels); the kernel's own
 * description (GET /api/experiments) where there is none here. Bounds and defaults are never written here: the form
 * shows the published ones beside this text. */
export const fieldHelp: Record<string, string> = {
  'cpu.op':
    'What to measure: floating-point throughput in double (FP64) or single (FP32) precision, in GFLOP/s, or integer additions, in GIOP/s. Tick several to measure each in a run of its own.',
  'cpu_trace.op': 'What the trace measures: FP64 or FP32 floating-point, or integer throughput. Tick several for one trace each.',
  'memory.op':
    'Copy, read, write and their random variants move blocks of the sizes below through a buffer larger than the caches; the STREAM operations are the classic STREAM benchmark loops; load latency follows a random chain through working sets of the sizes below. Tick several to measure each in a run of its own.',
  'network.op':
    'Throughput of a one-way TCP or UDP stream (Mbit/s), or round trips of one message (round trips per second and their latency). Tick several to measure each in a run of its own.',
  'network_pair.op': 'Throughput of a one-way TCP or UDP stream (Mbit/s), or round trips of one message (round trips per second and their latency).',
  'disk.ops': 'Sequential and random reads and writes, and a 50/50 mix of reads and writes; each runs at every block size.',
  'gpu.ops':
    'Floating-point (FP32, FP64) and integer arithmetic on the GPU, its memory bandwidth, and copies between host memory and the GPU; each runs in turn.',
  isa: 'Which vector instructions the loops use. Auto takes the widest this CPU has; pick another to compare them (a CPU without it refuses the run).',
  threads: 'How many threads to run, as a list: each count is measured in turn. More threads than the host has CPUs still run, and their figures are marked oversubscribed.',
  'cpu_trace.threads': 'Threads kept busy for the whole trace.',
  repeats: 'How many times each configuration is measured: the results give their mean and spread.',
  duration_s: 'How long each measurement lasts, in seconds.',
  'cpu_trace.duration_s': 'How long the trace lasts, in seconds: one point per second.',
  warmup_s: 'Seconds of unmeasured work before the measurements of each configuration, so that clocks and caches settle. 0 skips it.',
  stable_cv:
    'Keep measuring until the measurements agree within this relative spread (0.035: within 3.5 %), up to the most repeats below. 0 measures exactly the repeats asked for.',
  max_repeats: 'The most measurements of one configuration while repeating until stable.',
  quiet_wait_s: 'On a busy host: before each measurement, wait up to this many seconds for other programs to leave the CPUs free. 0 starts at once.',
  disturbed_retries: 'On a busy host: measure again when other programs took CPU time from a measurement, up to this many times; only the last try counts.',
  work: 'Strong scaling: a fixed amount of work per measurement, shared among the threads and timed until the slowest one finishes; the duration is then a limit. 0 measures for a fixed time instead.',
  reference: 'Afterwards, run the well-known tools that measure the same thing (HPL, STREAM, likwid-bench, fio, IOzone, iperf3, sockperf, ping) and show their figures beside ours.',
  hpl_n: "With the reference tools on, for FP64: the size N of the matrix HPL solves (it takes 8 × N² bytes of memory; a larger N runs longer). 0 picks one from this run's own figure.",
  'memory.blocks': 'How much each operation moves at once, e.g. 8 B, 8 KiB, 8 MiB; each size is measured in turn.',
  'disk.blocks':
    'The size of each read or write, e.g. 4 KiB, 1 MiB; each size is measured in turn. A size the disk cannot move directly goes through the page cache, emptied before each pass.',
  buffer_bytes: 'How much memory the block operations walk through, over all threads. 0 picks four times the L3 cache, so that the data comes from main memory.',
  array_size: 'STREAM operations: the length of each array in 8-byte numbers, over all threads. 0 picks four times the L3 cache per array, as STREAM itself does.',
  allow_cache: 'Measure even when the data fits in a cache, to measure the cache on purpose; each result names the cache level it fits in.',
  'memory.sizes': 'Load latency: how much memory each thread chases through, e.g. 32 KiB, 1 MiB, 1 GiB; each is measured in turn and named by the cache level it fits in.',
  'network.sizes': 'The size of each message, e.g. 1 B, 1 KiB, 64 KiB; each size is measured in turn.',
  'network_pair.sizes': 'The size of each message, e.g. 1 B, 1 KiB, 64 KiB; each size is measured in turn.',
  streams: 'Connections at once, each with a thread of its own; each count is measured in turn.',
  poll: 'Round trips only: how a thread waits for the reply. Blocking sleeps until it comes; busy poll spins on the CPU for a lower latency, and takes a CPU per thread.',
  iodepth: 'Requests in flight per thread. 1 sends one at a time; more uses an asynchronous interface (io_uring or Linux AIO).',
  direct: "Bypass the page cache, to measure the disk itself. Off: reads and writes go through the operating system's cache.",
  file_size: "The test file's size. It must fit in the free space where it goes; larger than the host's memory keeps the cache from answering reads.",
  target: "Where the test file goes: a disk target this host's runner offers (its card lists them), or work: the runner's own work directory.",
  device: 'Which GPU, as CUDA numbers them (0 is the first).',
  'gpu.bytes': 'The buffer for memory bandwidth and host–GPU copies. 0 picks one large enough to measure memory, not a cache.',
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
