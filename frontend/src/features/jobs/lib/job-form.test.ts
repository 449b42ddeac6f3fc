import { describe, expect, it } from 'vitest';
import { durationEstimate, hostProblem, shownFieldErrors, startingHostIds, startingKind, withoutServerError } from './job-form';

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

  it('wants one host or more, and exactly two for a network pair', () => {
    expect(hostProblem('cpu', [])).toBe('Pick at least one host');
    expect(hostProblem('cpu', [1, 2, 3])).toBeNull();
    expect(hostProblem('network_pair', [1, 2])).toBeNull();
    expect(hostProblem('network_pair', [1])).toMatch(/exactly two hosts \(1 picked\)/);
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
    expect(durationEstimate('cpu', params, false)).toEqual({ estimate: undefined, upTo: undefined, expected: undefined });
    expect(durationEstimate('cpu', params, true).estimate).toBe(22);
    expect(durationEstimate('cpu', params, true).upTo).toBeUndefined();
    expect(durationEstimate('cpu', { ...params, stable_cv: 0.05, max_repeats: 4 }, true).upTo).toBe(42);
    expect(durationEstimate('no_such', params, true).estimate).toBeUndefined();
  });
});
