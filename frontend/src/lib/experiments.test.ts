// The generic rules over GET /api/experiments: the expected duration from an experiment's published `duration`
// terms (as the server's Experiment.expected_duration + reference_allowance compute it), which parameters apply
// (its `applies`), and a run's role (its `roles` and `run_kinds`). The experiments are shaped as the API's.
import { describe, expect, it } from 'vitest';
import type { Experiment } from './api/types';
import { cpuExperiment, cpuTraceExperiment, diskExperiment, memoryExperiment, networkPairExperiment } from '../test/fixtures';
import { expectedDuration, fieldApplies, isTwoHost, parameterDefaults, roleOfRun } from './experiments';

describe('expectedDuration (from the published duration terms)', () => {
  it('cpu: thread counts × (warm-up + repeats × duration)', () => {
    const p = { op: 'fp64', threads: [1, 2], repeats: 2, duration_s: 5, warmup_s: 1 };
    expect(expectedDuration(cpuExperiment, p)).toEqual({ measuring: 22, measuringUpTo: 22, reference: 0, upTo: 22 });
  });

  it('takes the published default of every parameter not given', () => {
    // defaults: 4 thread counts, 3 repeats of 5 s, 1 s warm-up
    expect(expectedDuration(cpuExperiment, {})?.upTo).toBe(4 * (1 + 3 * 5));
    expect(expectedDuration(cpuExperiment, { threads: [8], repeats: undefined, duration_s: null })?.upTo).toBe(1 + 3 * 5);
  });

  it('cpu_trace: the fixed terms (one repeat, no warm-up) replace the params; no list counts', () => {
    expect(expectedDuration(cpuTraceExperiment, {})?.upTo).toBe(600);
    expect(expectedDuration(cpuTraceExperiment, { duration_s: 120, repeats: 5, warmup_s: 30 })?.upTo).toBe(120);
  });

  it('a list of ops (the fan_out parameter): one run per op, the sum of theirs', () => {
    const memory = { ...memoryExperiment, duration: { ...memoryExperiment.duration, fan_out: 'op' } };
    const base = { threads: [1, 2], repeats: 3, duration_s: 3, warmup_s: 1 }; // one configuration: 10 s
    // latency: 2 sizes × 2 thread counts; copy: 3 default blocks × 2 thread counts
    expect(expectedDuration(memory, { ...base, op: ['latency', 'copy'], sizes: [4096, 8192] })?.upTo).toBe((4 + 6) * 10);
    expect(expectedDuration(memory, { ...base, op: 'latency', sizes: [4096, 8192] })?.upTo).toBe(4 * 10);
    expect(expectedDuration(memory, { ...base, op: [] })?.upTo).toBe(0);
  });

  it('disk: the product of every per-item list', () => {
    const p = { ops: ['seq_read', 'rw'], blocks: [4096, 1048576, 8388608], threads: [1, 2], repeats: 1, duration_s: 2, warmup_s: 1 };
    expect(expectedDuration(diskExperiment, p)?.upTo).toBe(2 * 3 * 2 * (1 + 2));
  });

  it('memory: a latency op counts its sizes, a block op its blocks, a STREAM op neither', () => {
    const base = { threads: [1, 2], repeats: 3, duration_s: 3, warmup_s: 1 }; // one configuration: 10 s
    // sizes: the 6 published defaults; blocks do not apply
    expect(expectedDuration(memoryExperiment, { ...base, op: 'latency', blocks: [8, 16, 24, 32] })?.upTo).toBe(6 * 2 * 10);
    expect(expectedDuration(memoryExperiment, { ...base, op: 'latency', sizes: [4096, 8192] })?.upTo).toBe(2 * 2 * 10);
    // blocks: the 3 published defaults; sizes do not apply
    expect(expectedDuration(memoryExperiment, { ...base, op: 'copy', sizes: [4096] })?.upTo).toBe(3 * 2 * 10);
    expect(expectedDuration(memoryExperiment, { ...base, op: 'rand_write', blocks: [64] })?.upTo).toBe(1 * 2 * 10);
    expect(expectedDuration(memoryExperiment, { ...base, op: 'stream_triad', blocks: [64, 128], sizes: [4096, 8192] })?.upTo).toBe(2 * 10);
    // no op given: the default (copy) decides
    expect(expectedDuration(memoryExperiment, base)?.upTo).toBe(3 * 2 * 10);
  });

  it('repeat until stable: the worst case at max_repeats, only when stable_cv > 0', () => {
    const p = { op: 'fp64', threads: [1, 2], repeats: 2, duration_s: 5, warmup_s: 1 };
    expect(expectedDuration(cpuExperiment, { ...p, stable_cv: 0.01, max_repeats: 10 })).toEqual({
      measuring: 22, measuringUpTo: 2 * (1 + 10 * 5), reference: 0, upTo: 2 * (1 + 10 * 5),
    });
    expect(expectedDuration(cpuExperiment, { ...p, stable_cv: 0, max_repeats: 10 })?.upTo).toBe(22);
    // max_repeats below repeats: repeats stands (the server's max(repeats, max_repeats))
    expect(expectedDuration(cpuExperiment, { ...p, stable_cv: 0.05, max_repeats: 1 })?.upTo).toBe(22);
    // memory publishes max_repeats' default (10)
    expect(expectedDuration(memoryExperiment, { op: 'stream_copy', threads: [1], stable_cv: 0.03 })).toMatchObject({ measuring: 10, measuringUpTo: 31 });
  });

  it('busy hosts: each measured phase may wait quiet_wait_s and be measured disturbed_retries more times (the cap)', () => {
    const p = { op: 'fp64', threads: [1, 2], repeats: 2, duration_s: 5, warmup_s: 1 };
    expect(expectedDuration(cpuExperiment, { ...p, quiet_wait_s: 4, disturbed_retries: 2 })).toEqual({
      measuring: 22, measuringUpTo: 2 * (1 + 2 * (5 + 4 + 2 * 5)), reference: 0, upTo: 2 * (1 + 2 * (5 + 4 + 2 * 5)),
    });
  });

  it('reference tools: the allowance per thread count, once where the experiment has no per-list or it is no list', () => {
    const p = { op: 'fp64', threads: [1, 2, 4], repeats: 1, duration_s: 1, warmup_s: 0 };
    expect(expectedDuration(cpuExperiment, { ...p, reference: true })).toEqual({ measuring: 3, measuringUpTo: 3, reference: 900, upTo: 903 });
    expect(expectedDuration(cpuExperiment, { ...p, reference: false })?.reference).toBe(0);
    // the default thread counts (4) when threads is not given
    expect(expectedDuration(cpuExperiment, { reference: true })?.reference).toBe(4 * 300);
    // cpu_trace: threads is one number
    expect(expectedDuration(cpuTraceExperiment, { threads: 8, reference: true })).toMatchObject({ reference: 300, upTo: 900 });
    // two hosts: reference_per is null
    expect(expectedDuration(networkPairExperiment, { reference: true })?.reference).toBe(300);
    // the figure is the experiment's, not a constant here
    const slower = { ...cpuExperiment, duration: { ...cpuExperiment.duration, reference_allowance_s: 60 } };
    expect(expectedDuration(slower, { ...p, reference: true })?.reference).toBe(180);
  });

  it('is unknown while a list it counts has neither a value nor a published default', () => {
    // As the API publishes a list parameter whose default is a factory: no "default" key.
    const noListDefaults: Experiment = {
      ...cpuExperiment,
      parameters: {
        type: 'object',
        properties: {
          threads: { items: { minimum: 1, type: 'integer' }, type: 'array' },
          repeats: { default: 3, type: 'integer' },
          duration_s: { default: 5, type: 'number' },
          warmup_s: { default: 1, type: 'number' },
          reference: { default: false, type: 'boolean' },
        },
      },
    };
    expect(expectedDuration(noListDefaults, {})).toBeUndefined();
    expect(expectedDuration(noListDefaults, { threads: [1, 2] })?.upTo).toBe(2 * 16);
  });
});

describe('fieldApplies (from the published applies)', () => {
  it('memory: blocks only for block ops, sizes only for latency, on raw form values too', () => {
    expect(fieldApplies(memoryExperiment, 'blocks', { op: 'stream_triad' })).toBe(false);
    expect(fieldApplies(memoryExperiment, 'sizes', { op: 'stream_triad' })).toBe(false);
    expect(fieldApplies(memoryExperiment, 'blocks', { op: 'copy' })).toBe(true);
    expect(fieldApplies(memoryExperiment, 'blocks', { op: 'rand_read' })).toBe(true);
    expect(fieldApplies(memoryExperiment, 'sizes', { op: 'latency' })).toBe(true);
    expect(fieldApplies(memoryExperiment, 'blocks', { op: 'latency' })).toBe(false);
    expect(fieldApplies(memoryExperiment, 'threads', { op: 'latency' })).toBe(true);
    // op not chosen (or left empty): its default, copy
    expect(fieldApplies(memoryExperiment, 'blocks', {})).toBe(true);
    expect(fieldApplies(memoryExperiment, 'sizes', { op: '' })).toBe(false);
  });

  it('every parameter applies where the experiment publishes no rule', () => {
    expect(fieldApplies(cpuExperiment, 'threads', { op: 'fp64' })).toBe(true);
    expect(fieldApplies(cpuExperiment, 'sizes', {})).toBe(true);
  });

  it('compares form text with typed values', () => {
    const e = { ...memoryExperiment, applies: { poll: { streams: [1] } } };
    expect(fieldApplies(e, 'poll', { streams: '1' })).toBe(true);
    expect(fieldApplies(e, 'poll', { streams: 2 })).toBe(false);
  });
});

describe('roles: two hosts is a capability of the experiment', () => {
  const experiments = [cpuExperiment, networkPairExperiment, memoryExperiment];

  it('a run takes its role from the experiment whose run_kinds name it', () => {
    expect(roleOfRun(experiments, 'network_serve')).toBe('serve');
    expect(roleOfRun(experiments, 'network_drive')).toBe('drive');
    expect(roleOfRun(experiments, 'cpu')).toBe('host');
    expect(roleOfRun(experiments, 'unknown')).toBeUndefined();
    expect(roleOfRun(undefined, 'network_serve')).toBeUndefined();
    // roles follow the data, not a name
    const other = { kind: 'x', roles: ['serve', 'drive'], run_kinds: ['x_listen', 'x_send'] };
    expect(roleOfRun([other], 'x_send')).toBe('drive');
  });

  it('an experiment with two roles takes two hosts', () => {
    expect(isTwoHost(networkPairExperiment)).toBe(true);
    expect(isTwoHost(cpuExperiment)).toBe(false);
    expect(isTwoHost(undefined)).toBe(false);
  });

  it('reads the published defaults', () => {
    expect(parameterDefaults(cpuTraceExperiment)).toEqual({ op: 'fp64', threads: 1, duration_s: 600 });
  });
});
