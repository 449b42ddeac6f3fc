import { render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('chart.js', async () => (await import('../../../test/chart-mock')).chartJsMock());

import { chartSpies } from '../../../test/chart-mock';
import { sample } from '../../../test/fixtures';
import { TraceView } from './TraceView';

beforeEach(() => chartSpies.reset());

const samples = Array.from({ length: 600 }, (_, i) => sample(i, { value: i < 300 ? 50 : 44 }));
const trace = { n: 600, min: 44, mean: 47, max: 50, stddev: 3, throttle: { at_s: 299, baseline: 50, level: 44, drop: 0.12 }, stretches: [], flags: [] };

describe('TraceView', () => {
  it('shows min / mean / max with units and describes the throttling', () => {
    render(<TraceView trace={trace} samples={samples} t0={1000} unit="GFLOP/s" theme="light" fileName="t.png" />);
    const fig = screen.getByRole('figure', { name: /^CPU trace/ });
    expect(fig).toHaveAttribute('data-points', '600');
    expect(fig).toHaveAttribute('data-throttle', 'yes');
    const stats = within(fig).getByLabelText('Trace summary');
    expect(stats).toHaveTextContent('Samples600');
    expect(stats).toHaveTextContent('Min44 GFLOP/s');
    expect(stats).toHaveTextContent('Mean47 GFLOP/s');
    expect(stats).toHaveTextContent('Max50 GFLOP/s');
    expect(stats).toHaveTextContent('Throttlingsustained drop of 12 % at 299 s: 50 → 44 GFLOP/s');
  });

  it('draws 600 points without parsing, normalized and decimated, with a throttling marker where the drop starts', () => {
    render(<TraceView trace={trace} samples={samples} t0={1000} unit="GFLOP/s" theme="dark" fileName="t.png" />);
    const chart = chartSpies.instances[0]!;
    expect(chart.options).toMatchObject({ animation: false, parsing: false, normalized: true, spanGaps: false });
    const plugins = chart.options.plugins as { decimation: { enabled: boolean; algorithm: string }; hbMarkers: { markers: unknown[] } };
    expect(plugins.decimation).toMatchObject({ enabled: true, algorithm: 'lttb' });
    // first sample ends at t = 1001 → x 1; throttle 299 s later.
    expect(plugins.hbMarkers.markers).toEqual([{ x: 300, label: 'throttling −12 %', kind: 'alert' }]);
    expect(chart.data.datasets.map((d) => d.label)).toEqual(['GFLOP/s per second', 'max', 'mean', 'min']);
    expect((chart.data.datasets[0]?.data as unknown[]).length).toBe(600);
  });

  it('says so when no throttling was detected', () => {
    render(<TraceView trace={{ ...trace, throttle: null, stretches: [], flags: [] }} samples={samples} t0={1000} unit="GFLOP/s" theme="light" fileName="t.png" />);
    expect(screen.getByLabelText('Trace summary')).toHaveTextContent('Throttlingnone detected');
    expect((chartSpies.instances[0]!.options.plugins as { hbMarkers: { markers: unknown[] } }).hbMarkers.markers).toEqual([]);
  });

  it('marks where the kernel lost its CPU apart from where the clock fell', () => {
    const stretches = [
      { from_s: 100, to_s: 160, reference: 50, level: 25, cause: 'cpu_lost' as const },
      { from_s: 400, to_s: 460, reference: 50, level: 44, cause: 'throttled' as const },
    ];
    render(<TraceView trace={{ ...trace, stretches, cpu_share: 0.7 }} samples={samples} t0={1000} unit="GFLOP/s" theme="light" fileName="t.png" />);
    const fig = screen.getByRole('figure', { name: /^CPU trace/ });
    expect(fig).toHaveAttribute('data-cpu-lost', 'yes');
    expect(fig).toHaveAttribute('data-throttle', 'yes');
    const stats = screen.getByLabelText('Trace summary');
    expect(stats).toHaveTextContent('CPU share0.7');
    expect(stats).toHaveTextContent('CPU lostCPU lost 100–160 s: 50 → 25 GFLOP/s');
    expect(stats).toHaveTextContent('Throttlingclock fell 400–460 s: 50 → 44 GFLOP/s');
    const plugins = chartSpies.instances[0]!.options.plugins as { hbMarkers: { markers: unknown[]; bands: unknown[] } };
    expect(plugins.hbMarkers.markers).toEqual([
      { x: 101, label: 'CPU lost', kind: 'lost' },
      { x: 401, label: 'clock fell', kind: 'alert' },
    ]);
    expect(plugins.hbMarkers.bands).toEqual([
      { from: 101, to: 161, kind: 'lost' },
      { from: 401, to: 461, kind: 'alert' },
    ]);
  });
});
