// Shapes as docs/api.md and the backend's schemas define them; used by component tests.
import type { Experiment, HostPublic, Me, RegistrationToken, ResultRow, RunPublic, Sample, UserPublic } from '../lib/api/types';

export const cpuExperiment: Experiment = {
  kind: 'cpu',
  axes: { count: 'thread', counts: 'threads', size: 'block size', sized: 'blocks' },
  title: 'CPU throughput',
  description: 'FP64/FP32 FLOPS or integer ops at each thread count, repeated.',
  unit_hint: 'GFLOP/s',
  units_by_op: { int32: 'GIOP/s' },
  roles: ['host'],
  run_kinds: ['cpu'],
  reference_tools: ['hpcc', 'likwid-bench'],
  needs_gpu: false,
  applies: {},
  duration: { per_item: ['threads'], fan_out: 'op', fixed: {}, reference_allowance_s: 300, reference_per: 'threads' },
  // As pydantic's model_json_schema() writes CpuParams (auto titles, number|integer unions).
  parameters: {
    additionalProperties: false,
    properties: {
      // a fan-out parameter: one op, or a list of them (one run per op)
      op: {
        anyOf: [{ enum: ['fp64', 'fp32', 'int32'], type: 'string' }, { items: { enum: ['fp64', 'fp32', 'int32'], type: 'string' }, maxItems: 3, minItems: 1, type: 'array', uniqueItems: true }],
        default: 'fp64', description: 'fp64 / fp32: FMA FLOPS; int32: vector integer adds. A list of them runs each: one run per item.', title: 'Op',
      },
      threads: {
        default: [1, 2, 4, 8],
        description: 'Thread counts to run, one after another',
        items: { maximum: 256, minimum: 1, type: 'integer' },
        maxItems: 64,
        minItems: 1,
        title: 'Threads',
        type: 'array',
      },
      repeats: { default: 3, description: 'Measured repeats per thread count', maximum: 100, minimum: 1, title: 'Repeats', type: 'integer' },
      duration_s: {
        anyOf: [{ type: 'number' }, { type: 'integer' }],
        default: 5,
        description: 'Length of one repeat, seconds',
        maximum: 3600,
        minimum: 0.2,
        title: 'Duration S',
      },
      warmup_s: {
        anyOf: [{ type: 'number' }, { type: 'integer' }],
        default: 1,
        description: 'Warm-up before each thread count, excluded, seconds',
        maximum: 600,
        minimum: 0,
        title: 'Warmup S',
      },
    },
    title: 'CpuParams',
    type: 'object',
  },
};

export const cpuTraceExperiment: Experiment = {
  kind: 'cpu_trace',
  axes: { count: 'thread', counts: 'threads', size: 'block size', sized: 'blocks' },
  title: 'CPU trace',
  description: 'One thread count held for a duration, sampled every second.',
  unit_hint: 'GFLOP/s',
  units_by_op: { int32: 'GIOP/s' },
  roles: ['host'],
  run_kinds: ['cpu_trace'],
  reference_tools: [],
  needs_gpu: false,
  applies: {},
  duration: { per_item: [], fixed: { repeats: 1, warmup_s: 0 }, reference_allowance_s: 300, reference_per: 'threads' },
  parameters: {
    type: 'object',
    properties: {
      op: { default: 'fp64', enum: ['fp64', 'fp32', 'int32'], type: 'string' },
      threads: { default: 1, maximum: 256, minimum: 1, type: 'integer', description: 'Thread count held for the whole trace' },
      duration_s: { anyOf: [{ type: 'number' }, { type: 'integer' }], default: 600, maximum: 86400, minimum: 1 },
    },
  },
};

export const diskExperiment: Experiment = {
  kind: 'disk',
  axes: { count: 'thread', counts: 'threads', size: 'block size', sized: 'blocks' },
  title: 'Disk',
  description: 'Sequential/random read/write and mixed I/O over block sizes.',
  unit_hint: 'MB/s',
  units_by_op: {},
  roles: ['host'],
  run_kinds: ['disk'],
  reference_tools: ['fio', 'iozone'],
  needs_gpu: false,
  applies: {},
  duration: { per_item: ['ops', 'blocks', 'threads'], fixed: {}, reference_allowance_s: 300, reference_per: 'threads' },
  parameters: {
    type: 'object',
    additionalProperties: false,
    properties: {
      repeats: { default: 3, maximum: 100, minimum: 1, type: 'integer', description: 'Measured repeats per configuration' },
      duration_s: { anyOf: [{ type: 'number' }, { type: 'integer' }], default: 3, maximum: 3600, minimum: 0.2 },
      warmup_s: { anyOf: [{ type: 'number' }, { type: 'integer' }], default: 1, maximum: 600, minimum: 0 },
      ops: {
        default: ['seq_read', 'seq_write', 'rand_read', 'rand_write', 'rw'], description: 'Operations: sequential/random read/write, 50/50 mixed',
        items: { enum: ['rw', 'seq_read', 'seq_write', 'rand_read', 'rand_write'], type: 'string' }, maxItems: 5, minItems: 1, type: 'array',
      },
      blocks: {
        default: [8, 8192, 8388608, 83886080], description: 'Block sizes, bytes', items: { maximum: 83886080, minimum: 1, type: 'integer' },
        maxItems: 64, minItems: 1, type: 'array', 'x-unit': 'B',
      },
      direct: { default: false, type: 'boolean', description: 'O_DIRECT (bypass the page cache)' },
      threads: { default: [1, 2, 4, 8], items: { maximum: 256, minimum: 1, type: 'integer' }, maxItems: 64, minItems: 1, type: 'array' },
    },
  },
};

export const networkPairExperiment: Experiment = {
  kind: 'network_pair',
  axes: { count: 'stream', counts: 'streams', size: 'message size', sized: 'messages' },
  axes_by_op: {
    udp_stream: { count: 'stream', counts: 'streams', size: 'datagram size', sized: 'datagrams' },
    udp_rr: { count: 'stream', counts: 'streams', size: 'datagram size', sized: 'datagrams' },
  },
  title: 'Network (two hosts)',
  description: 'TCP/UDP throughput and round-trip latency between two hosts: host_ids[0] serves, host_ids[1] drives.',
  unit_hint: 'Mbit/s',
  units_by_op: { tcp_rr: 'RT/s', udp_rr: 'RT/s' },
  roles: ['serve', 'drive'],
  run_kinds: ['network_serve', 'network_drive'],
  reference_tools: ['iperf3', 'sockperf', 'ping'],
  needs_gpu: false,
  applies: {},
  duration: { per_item: ['sizes', 'streams'], fixed: {}, reference_allowance_s: 300, reference_per: null },
  parameters: {
    type: 'object',
    additionalProperties: false,
    properties: {
      op: { default: 'tcp_stream', enum: ['tcp_stream', 'udp_stream', 'tcp_rr', 'udp_rr'], type: 'string' },
      sizes: {
        default: [65536], description: 'Message sizes, bytes', items: { maximum: 4194304, minimum: 1, type: 'integer' }, maxItems: 64, minItems: 1, type: 'array',
        'x-unit': 'B',
      },
      streams: { default: [1], items: { maximum: 8, minimum: 1, type: 'integer' }, maxItems: 8, minItems: 1, type: 'array' },
      repeats: { default: 2, maximum: 100, minimum: 1, type: 'integer' },
      duration_s: { anyOf: [{ type: 'number' }, { type: 'integer' }], default: 1, maximum: 3600, minimum: 0.2 },
      warmup_s: { anyOf: [{ type: 'number' }, { type: 'integer' }], default: 0, maximum: 600, minimum: 0 },
    },
  },
};

export const memoryExperiment: Experiment = {
  kind: 'memory',
  axes: { count: 'thread', counts: 'threads', size: 'block size', sized: 'blocks' },
  axes_by_op: { latency: { count: 'thread', counts: 'threads', size: 'working set per thread', sized: 'working set' } },
  title: 'Memory',
  description: 'Bandwidth of block ops and STREAM-variant kernels; dependent-load latency against working-set size.',
  unit_hint: 'MB/s',
  units_by_op: { latency: 'Mload/s' },
  roles: ['host'],
  run_kinds: ['memory'],
  reference_tools: ['stream'],
  needs_gpu: false,
  applies: { blocks: { op: ['copy', 'read', 'write', 'rand_read', 'rand_write'] }, sizes: { op: ['latency'] } },
  duration: { per_item: ['blocks', 'sizes', 'threads'], fan_out: 'op', fixed: {}, reference_allowance_s: 300, reference_per: 'threads' },
  parameters: {
    type: 'object',
    additionalProperties: false,
    properties: {
      op: {
        anyOf: [{ enum: ['copy', 'read', 'write', 'rand_read', 'rand_write', 'stream_copy', 'stream_scale', 'stream_add', 'stream_triad', 'latency'], type: 'string' }, { items: { enum: ['copy', 'read', 'write', 'rand_read', 'rand_write', 'stream_copy', 'stream_scale', 'stream_add', 'stream_triad', 'latency'], type: 'string' }, maxItems: 10, minItems: 1, type: 'array', uniqueItems: true }],
        default: 'copy', title: 'Op',
      },
      blocks: {
        default: [64, 4096, 1048576], description: 'Block sizes in bytes, multiples of 8', items: { maximum: 1073741824, minimum: 8, multipleOf: 8, type: 'integer' },
        maxItems: 64, minItems: 1, type: 'array', 'x-unit': 'B',
      },
      sizes: {
        default: [4096, 65536, 1048576, 16777216, 268435456, 1073741824], description: 'Working-set sizes, bytes',
        items: { maximum: 17179869184, minimum: 4096, type: 'integer' }, maxItems: 64, minItems: 1, type: 'array', 'x-unit': 'B',
      },
      threads: { default: [1, 2], items: { maximum: 256, minimum: 1, type: 'integer' }, maxItems: 64, minItems: 1, type: 'array' },
      repeats: { default: 3, maximum: 100, minimum: 1, type: 'integer' },
      duration_s: { default: 3, maximum: 3600, minimum: 0.2, type: 'number' },
      warmup_s: { default: 1, maximum: 600, minimum: 0, type: 'number' },
      stable_cv: { default: 0, maximum: 0.5, minimum: 0, type: 'number' },
      max_repeats: { default: 10, maximum: 1000, minimum: 1, type: 'integer' },
      reference: { default: false, type: 'boolean' },
    },
  },
};

export const host: HostPublic = {
  id: 1,
  name: 'bench-a',
  hostname: 'bench-a.local',
  online: true,
  last_seen_at: new Date().toISOString(),
  registered_at: '2026-11-01T10:00:00Z',
  runner_version: '0.1.0',
  labels: { provider: 'aws', instance_type: 'c7i.large' },
  inventory: {
    cpu: { model: 'Intel Xeon Platinum 8488C', vendor: 'GenuineIntel', sockets: 1, cores: 2, cores_per_socket: 2, threads: 4, threads_per_core: 2, isa: ['sse2', 'avx2', 'avx512'], best_isa: 'avx512' },
    memory: { total_bytes: 4 * 1024 ** 3 },
    os: { kernel: '6.1.0-18-amd64', distribution: 'Debian GNU/Linux 12' },
  },
  peaks: {
    cpu_fp64: { value: 118.4, unit: 'GFLOP/s', formula: '2 cores × 3.700 GHz × 16 FLOP/cycle', source: 'computed' },
    cpu_int32: null,
  },
  peak_notes: { cpu_int32: 'CPU clock unknown until a CPU run measures it' },
  revoked: false,
  revoked_at: null,
  address: '10.0.0.5',
  version_mismatch: false,
  server_version: '0.1.0',
  credential_rotation_pending: false,
};

export function resultRow(over: Partial<ResultRow> = {}): ResultRow {
  return {
    op: 'fp64', threads: 1, block_bytes: null, unit: 'GFLOP/s', n: 3, mean: 52.345, stddev: 0.4567, min: 51.9, max: 52.8,
    median: 52.3, ci95_low: 51.2, ci95_high: 53.5, cv: 0.009, values: [51.9, 52.3, 52.8], outliers: [],
    peak: { value: 59.2, unit: 'GFLOP/s', formula: '1 core × 3.700 GHz × 16 FLOP/cycle', source: 'computed' },
    extra: {}, references: [], efficiency: 0.8842, valid: true, invalid_reason: null, verdict: 'valid', flags: [],
    ...over,
  };
}

export function run(over: Partial<RunPublic> = {}): RunPublic {
  return {
    id: 7, job_id: 3, host_id: 1, host_name: 'bench-a', experiment: 'cpu',
    params: { op: 'fp64', threads: [1], repeats: 1, duration_s: 3, warmup_s: 0 },
    status: 'running', status_reason: null, attempt: 1, created_at: '2026-11-01T10:00:00Z', started_at: '2026-11-01T10:00:01Z',
    finished_at: null, expected_duration_s: 3, progress: 0.3, last_seq: 0, unit: 'GFLOP/s', kernel_info: null, result: null,
    created_by: null, cancelled_by: null, headline: null, verdict: null, result_updating: false,
    ...over,
  };
}

export function sample(seq: number, over: Partial<Sample> = {}): Sample {
  return { seq, t: 1000 + seq + 1, interval_s: 1, threads: 1, repeat: 1, warmup: false, value: 50 + seq, unit: 'GFLOP/s', op: 'fp64', block_bytes: null, ...over };
}

export const admin: Me = { id: 1, name: 'ada', role: 'admin', has_password: true };
export const operator: Me = { id: 2, name: 'otto', role: 'operator', has_password: true };
export const viewer: Me = { id: 3, name: 'vera', role: 'viewer', has_password: true };

export function user(over: Partial<UserPublic> = {}): UserPublic {
  return { id: 3, name: 'vera', role: 'viewer', created_at: '2026-11-01T10:00:00Z', disabled: false, has_password: true, ...over };
}

export const registrationToken: RegistrationToken = {
  token: 'hbreg_abc123',
  expires_at: '2026-11-01T10:15:00Z',
  install_command: 'curl -fsSL http://10.0.0.1:8000/install.sh | sudo sh -s -- --server http://10.0.0.1:8000 --registration-token hbreg_abc123',
  container_command: 'docker run -d --name hostbench-runner --network host hostbench-runner --server http://10.0.0.1:8000 --registration-token hbreg_abc123',
  shell_command: 'test -s /opt/hostbench-runner/state/credential.json || { curl -fsSL http://10.0.0.1:8000/api/install/runner.sh | sh -s -- --token hbreg_abc123; }',
  cloud_init: '#cloud-config\nruncmd:\n  - - "sh"\n',
  kubernetes_manifest: '---\napiVersion: "v1"\nkind: "Namespace"\n',
  kubernetes_jobs: '',
  info: {
    id: 1, name: null, created_at: '2026-11-01T10:00:00Z', created_by: 'vera', expires_at: '2026-11-01T10:15:00Z',
    max_uses: 1, uses_left: 1, uses: 0, labels: {}, revoked_at: null, usable: true,
  },
};
