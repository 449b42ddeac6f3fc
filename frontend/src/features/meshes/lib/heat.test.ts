import { describe, expect, it } from 'vitest';
import type { Mesh, MeshCell } from '../api/meshes';
import { heat, heatColour, heatGrid, isSlowest, roundsFor } from './heat';

const cell = (server: number, client: number, mbps: number | null, rtt: number | null = 20): MeshCell => ({
  server_host_id: server, client_host_id: client, round: 0, status: 'succeeded', mbps, rtt_us: rtt, share: null,
  stream_run_id: 1, rr_run_id: 2, validity: 'valid', verdict: 'NO BASELINE', verdict_reason: null,
});

const mesh = (over: Partial<Mesh>): Mesh => ({
  id: 1, created_at: '2026-11-29T03:00:00Z', created_by: 'a', mode: 'all_pairs', server: null, ops: ['tcp_stream'],
  params: {}, rounds: 3, status: 'done', runs: {}, wall_s: 10, aggregate_mbps: null, overlap_s: null,
  hosts: [{ id: 3, name: 'c' }, { id: 1, name: 'a' }, { id: 2, name: 'b' }],
  cells: [cell(2, 1, 900), cell(3, 1, 90), cell(3, 2, 1000)],
  slowest_link: { server_host_id: 3, client_host_id: 1, mbps: 90 },
  slowest_host: { host_id: 1, name: 'a', mean_mbps: 495 },
  ...over,
});

describe('heatGrid', () => {
  it('lays all pairs out square, by name, with the figures where measured', () => {
    const g = heatGrid(mesh({}));
    expect(g.rows.map((r) => r.name)).toEqual(['a', 'b', 'c']);
    expect(g.cols.map((r) => r.name)).toEqual(['a', 'b', 'c']);
    expect(g.cell(1, 3)?.mbps).toBe(90);
    expect(g.cell(3, 1)).toBeUndefined(); // one way: the other direction was not measured
    expect(g.top).toBe(1000);
  });

  it('lays many to one out as clients by the one server', () => {
    const m = mesh({ mode: 'many_to_one', server: { id: 9, name: 'srv' }, cells: [cell(9, 1, 400), cell(9, 2, 600)] });
    const g = heatGrid(m);
    expect(g.rows.map((r) => r.name)).toEqual(['a', 'b']);
    expect(g.cols.map((r) => r.name)).toEqual(['srv']);
  });
});

describe('heat', () => {
  it('is 0 for the fastest link, more for slower ones, null without a figure', () => {
    expect(heat(1000, 1000)).toBe(0);
    expect(heat(100, 1000)).toBeCloseTo(0.9);
    expect(heat(null, 1000)).toBeNull();
    expect(heat(5, null)).toBeNull();
    expect(heatColour(0)).toBe('hsl(130 65% 82%)');
    expect(heatColour(1)).toBe('hsl(0 65% 82%)');
    expect(heatColour(null)).toBeUndefined();
  });

  it('marks the slowest link named by the server', () => {
    const m = mesh({});
    expect(m.cells.filter((c) => isSlowest(m, c)).map((c) => c.mbps)).toEqual([90]);
  });
});

describe('roundsFor', () => {
  it('says the rounds the server plans', () => {
    expect(roundsFor('all_pairs', 8)).toBe(7);
    expect(roundsFor('all_pairs', 5)).toBe(5);
    expect(roundsFor('all_pairs_both_ways', 8)).toBe(14);
    expect(roundsFor('many_to_one', 8, 2)).toBe(2);
  });
});
