import { render, screen } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('chart.js', async () => (await import('../../test/chart-mock')).chartJsMock());

import { chartSpies } from '../../test/chart-mock';
import { GroupedBarChart, valueCeiling } from './GroupedBarChart';

beforeEach(() => chartSpies.reset());

const series = [
  { label: '1 thread', values: [10, 20], errors: [{ low: 9, high: 11 }, null], invalid: [false, true], notes: [['min 9'], null] },
  { label: '2 threads', values: [18, null] },
];

describe('GroupedBarChart', () => {
  it('hands Chart.js one bar dataset per series with whiskers, and outlines invalid figures', () => {
    render(<GroupedBarChart title="Copy: throughput" categories={['8 B', '8 KiB']} series={series} unit="MB/s" theme="light" fileName="x.png" />);
    const fig = screen.getByRole('figure', { name: /Copy: throughput/ });
    expect(fig).toHaveAttribute('data-bars', '3');
    expect(screen.getByRole('img', { name: /3 bars in MB\/s, whiskers = ± stddev/ })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Download PNG of Copy: throughput' })).toBeInTheDocument();

    const chart = chartSpies.instances[0]!;
    expect(chart.type).toBe('bar');
    expect(chart.data.labels).toEqual(['8 B', '8 KiB']);
    const [one, two] = chart.data.datasets;
    expect(one).toMatchObject({ label: '1 thread', data: [10, 20], errorBars: [{ low: 9, high: 11 }, null], borderWidth: [1, 2] });
    expect((one?.borderColor as string[])[1]).toBe('#dc2626');
    expect(two).toMatchObject({ label: '2 threads', data: [18, null], errorBars: [] });
    const y = (chart.options.scales as { y: { suggestedMax: number; beginAtZero: boolean } }).y;
    expect(y.beginAtZero).toBe(true);
    expect(y.suggestedMax).toBeCloseTo(21); // 20 × 1.05: whiskers never run off the top
  });

  it('hands marker lines (cache sizes) to the hbMarkers plugin, and none when it has none', () => {
    const markers = [{ x: 0.5, label: 'L1d 32 KiB', kind: 'config' as const }];
    render(<GroupedBarChart title="Read" categories={['8 B', '8 KiB']} series={series} unit="MB/s" theme="dark" fileName="x.png" markers={markers} />);
    const plugins = chartSpies.instances[0]!.options.plugins as Record<string, unknown>;
    expect(plugins.hbMarkers).toMatchObject({ markers });
    render(<GroupedBarChart title="Plain" categories={['8 B']} series={series} unit="MB/s" theme="dark" fileName="y.png" />);
    expect(chartSpies.instances[1]!.options.plugins).not.toHaveProperty('hbMarkers');
  });

    it('finds the highest bar or whisker top', () => {
    expect(valueCeiling([{ label: 'a', values: [10, null], errors: [{ low: 5, high: 15 }, null] }])).toBe(15);
    expect(valueCeiling([])).toBe(0);
  });
});
