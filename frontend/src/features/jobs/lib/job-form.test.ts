import { describe, expect, it } from 'vitest';
import { cpuExperiment, cpuTraceExperiment, memoryExperiment, networkPairExperiment } from '../../../test/fixtures';
import {
  durationEstimate,
  hostProblem,
  maxThreads,
  missingGpu,
  oversubscription,
  paramsToSend,
  shownFieldErrors,
  startingHostIds,
  startingKind,
  withoutServerError,
} from './job-form';
import { fieldsFromSchema, initialValues, validateParams } from '../../../lib/param-schema';

const hosts = [
  { id: 1, name: 'a', online: true },
  { id: 2, name: 'b', online: false },
];

describe('job form rules', () => {
  it('starts with the hosts asked for that exist, else the only host', () => {
    expect(startingHostIds(hosts, [2, 9])).toEqual([2]);
    expect(startingHostIds(hosts, [9])).toEqual([]);
    expect(startingHostIds([hosts[0]!], undefined)).toEqual([1]);
  });

  it('starts with the experiment asked for when it exists, else the first', () => {
    const experiments = [{ kind: 'cpu' }, { kind: 'disk' }];
    expect(startingKind(experiments, 'disk')).toBe('disk');
    expect(startingKind(experiments, 'nope')).toBe('cpu');
    expect(startingKind([], undefined)).toBe('');
  });

  it('wants one host or more, and exactly two for an experiment of two roles', () => {
    expect(hostProblem(cpuExperiment, [])).toBe('Pick at least one host');
    expect(hostProblem(cpuExperiment, [1, 2, 3])).toBeNull();
    expect(hostProblem(networkPairExperiment, [1, 2])).toBeNull();
    expect(hostProblem(networkPairExperiment, [1])).toMatch(/exactly two hosts \(1 picked\)/);
    expect(hostProblem({ roles: ['serve', 'drive'] }, [1, 2, 3])).toMatch(/exactly two hosts \(3 picked\)/);
    expect(hostProblem(undefined, [])).toBe('Pick at least one host');
  });

  it('shows client errors of touched fields (all once submitted), then the server\'s', () => {
    const client = { repeats: 'too few', threads: 'bad' };
    const server = { repeats: 'server says', op: 'unknown op' };
    expect(shownFieldErrors(client, server, false, new Set(['threads']))).toEqual({ threads: 'bad', repeats: 'server says', op: 'unknown op' });
    expect(shownFieldErrors(client, server, true, new Set())).toEqual({ repeats: 'too few', threads: 'bad', op: 'unknown op' });
  });

  it('drops the server\'s error for a changed field and every form-level one', () => {
    const s = { fields: { host_ids: 'x', op: 'y' }, form: ['z'] };
    expect(withoutServerError(s, 'host_ids')).toEqual({ fields: { op: 'y' }, form: [] });
    const clean = { fields: { op: 'y' }, form: [] };
    expect(withoutServerError(clean, 'host_ids')).toBe(clean);
  });

  it('estimates the duration only for valid parameters, as a range when repeating until stable', () => {
    const params = { threads: [1, 2], repeats: 2, duration_s: 5, warmup_s: 1 };
    expect(durationEstimate(cpuExperiment, params, false)).toEqual({ estimate: undefined, upTo: undefined, expected: undefined });
    expect(durationEstimate(cpuExperiment, params, true).estimate).toBe(22);
    expect(durationEstimate(cpuExperiment, params, true).upTo).toBeUndefined();
    expect(durationEstimate(cpuExperiment, { ...params, stable_cv: 0.05, max_repeats: 4 }, true).upTo).toBe(42);
    expect(durationEstimate(undefined, params, true).estimate).toBeUndefined();
    expect(durationEstimate(cpuTraceExperiment, { duration_s: 60 }, true).estimate).toBe(60);
    expect(durationEstimate(cpuExperiment, { ...params, reference: true }, true).expected).toMatchObject({ reference: 600, upTo: 622 });
  });
});

describe('paramsToSend: only what the person changed', () => {
  const form = (experiment: typeof cpuExperiment, changes: Record<string, string | boolean> = {}) => {
    const fields = fieldsFromSchema(experiment.parameters);
    const initial = initialValues(fields);
    const raw = { ...initial, ...changes };
    const { params } = validateParams(fields, raw);
    return paramsToSend(fields, params, raw, initial);
  };

  it('sends nothing for a form left as it was: the server applies its defaults', () => {
    expect(form(cpuExperiment)).toEqual({});
    expect(form(networkPairExperiment)).toEqual({});
  });

  it('sends the changed ones only, as typed values', () => {
    expect(form(cpuExperiment, { threads: '1, 16', repeats: '5' })).toEqual({ threads: [1, 16], repeats: 5 });
    // UDP with the default sizes: sizes is not sent, so the server brings its default within UDP's limit
    expect(form(networkPairExperiment, { op: 'udp_stream' })).toEqual({ op: 'udp_stream' });
    expect(form(networkPairExperiment, { op: 'udp_stream', sizes: '1400' })).toEqual({ op: 'udp_stream', sizes: [1400] });
  });

  it('a value typed back to what the form showed is not a change', () => {
    expect(form(cpuExperiment, { threads: '1, 2, 4, 8' })).toEqual({});
  });

  it('never sends a parameter that does not apply, changed or not', () => {
    const fields = fieldsFromSchema(memoryExperiment.parameters).filter((f) => f.name !== 'blocks');
    const initial = initialValues(fieldsFromSchema(memoryExperiment.parameters));
    const raw = { ...initial, op: 'latency', blocks: '64' };
    expect(paramsToSend(fields, validateParams(fields, raw).params, raw, initial)).toEqual({ op: 'latency' });
  });

  it('always sends a required parameter that has no default', () => {
    const experiment = {
      ...cpuExperiment,
      parameters: { type: 'object', required: ['op'], properties: { op: { enum: ['a', 'b'], type: 'string' }, n: { default: 1, type: 'integer' } } },
    };
    expect(form(experiment)).toEqual({ op: 'a' });
  });
});

describe('threads beyond a host\'s CPUs', () => {
  const hosts = [
    { id: 1, name: 'small', online: true, cpus: 2 },
    { id: 2, name: 'big', online: true, cpus: 16 },
    { id: 3, name: 'unknown', online: true },
  ];
  it('reads the most threads asked for, from a number or a list', () => {
    expect(maxThreads({ threads: [1, 2, 8] })).toBe(8);
    expect(maxThreads({ threads: 4 })).toBe(4);
    expect(maxThreads({ op: 'fp64' })).toBeNull();
  });
  it('warns, naming the host and its CPUs, only when a picked host has fewer CPUs than threads', () => {
    const w = oversubscription(hosts, [1, 2], { threads: [1, 2, 4, 8] });
    // every count above the host's CPUs, not only the largest (issue 32)
    expect(w).toContain('More threads than CPUs: 4 and 8 threads on small (2 CPUs).');
    expect(w).not.toContain('big');
    expect(w).toContain('The runs still happen');
    expect(oversubscription(hosts, [1], { threads: [3, 4, 6, 8] })).toContain('3, 4, 6 and 8 threads on small (2 CPUs)');
    expect(oversubscription(hosts, [1], { threads: [1, 2] })).toBeNull();
    expect(oversubscription(hosts, [2], { threads: [8] })).toBeNull();
    expect(oversubscription(hosts, [3], { threads: [64] })).toBeNull(); // no CPU count known: no claim
    expect(oversubscription(hosts, [1], { sizes: [8] })).toBeNull();
  });
});

describe('a GPU experiment', () => {
  const fleet = [
    { id: 1, name: 'cpu-only', online: true, gpus: 0 },
    { id: 2, name: 'h200', online: true, gpus: 1 },
    { id: 3, name: 'old-runner', online: true, gpus: null },
    { id: 4, name: 'cpu-too', online: true, gpus: 0 },
  ];
  it('names every host picked whose inventory lists no GPU; one that does not say is left to the server', () => {
    expect(missingGpu({ needs_gpu: true }, fleet, [1, 2])).toBe(
      'cpu-only has no GPU (its inventory lists none): a GPU job cannot run there; pick a host with one',
    );
    expect(missingGpu({ needs_gpu: true }, fleet, [4, 1])).toMatch(/^cpu-too and cpu-only have no GPU \(their inventories list none\)/);
    expect(missingGpu({ needs_gpu: true }, fleet, [2, 3])).toBeNull();
    expect(missingGpu({ needs_gpu: false }, fleet, [1])).toBeNull();
  });
});
