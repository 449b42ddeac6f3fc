import { describe, expect, it } from 'vitest';
import type { FleetPublic } from '../api/fleet';
import { cellText, cellTitle, missingText, outlierCount, shownMetrics, toneOf } from './fleet';

const cell = (value: number, efficiency: number | null, over = {}) => ({
  value, unit: 'GFLOP/s', efficiency, run_id: 5, at: '2026-01-01T00:00:00Z', threads: 4, block_bytes: null, verdict: 'valid',
  outlier: false, outlier_note: null, ...over,
});

const fleet: FleetPublic = {
  metrics: [
    { key: 'cpu_fp64', title: 'CPU FP64', unit: 'GFLOP/s', lower_is_better: false },
    { key: 'disk_seq_read', title: 'Disk', unit: 'MB/s', lower_is_better: false },
  ],
  hosts: [
    { host_id: 1, name: 'a', online: true, labels: {}, cells: { cpu_fp64: cell(100, 0.8) } },
    { host_id: 2, name: 'b', online: true, labels: {}, cells: { cpu_fp64: cell(10, 0.1, { outlier: true, outlier_note: '-5.0 robust SD' }) } },
  ],
  outlier_method: 'median ± 3 MAD', group_by: 'instance_type',
};

describe('fleet cells', () => {
  it('are toned by efficiency, with no tone without a peak', () => {
    expect([0.9, 0.75, 0.6, 0.3, 0.1, 0].map(toneOf)).toEqual(['high', 'high', 'mid', 'low', 'poor', 'poor']);
    expect(toneOf(null)).toBe('none');
    expect(toneOf(Number.NaN)).toBe('none');
  });

  it('say the figure, its share of the peak, and why a cell is an outlier or not judged', () => {
    expect(cellText(cell(123.456, 0.5))).toBe('123.5 GFLOP/s · 50 %');
    expect(cellText(cell(9, null))).toBe('9 GFLOP/s');
    expect(cellTitle(cell(1, null, { verdict: 'disturbed' }))).toContain('verdict disturbed: not judged');
    expect(cellTitle(fleet.hosts[1]!.cells.cpu_fp64!)).toContain('outlier: -5.0 robust SD');
  });

  it('shows only the headline columns somebody measured, and counts the outliers', () => {
    expect(shownMetrics(fleet).map((m) => m.key)).toEqual(['cpu_fp64']);
    expect(outlierCount(fleet)).toBe(1);
  });

  it('say why a host has no headline figure, and keep that column', () => {
    const busy = { host_id: 3, name: 'busy', online: true, labels: {}, cells: {}, missing: { disk_seq_read: 'no valid run yet; 3 page cache' } };
    const f: FleetPublic = { ...fleet, hosts: [...fleet.hosts, busy] };
    expect(shownMetrics(f).map((m) => m.key)).toEqual(['cpu_fp64', 'disk_seq_read']);
    expect(missingText(busy, 'disk_seq_read')).toBe('no valid run yet; 3 page cache');
    expect(missingText(busy, 'cpu_fp64')).toBe('—');
    expect(missingText(fleet.hosts[0]!, 'disk_seq_read')).toBe('—');
  });
});
