import { render, screen } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('chart.js', async () => (await import('../../../test/chart-mock')).chartJsMock());

import { chartSpies } from '../../../test/chart-mock';
import { sample } from '../../../test/fixtures';
import { LiveRunChart } from './LiveRunChart';

beforeEach(() => chartSpies.reset());

const markersOf = (i = 0) => (chartSpies.instances[i]!.options.plugins as { hbMarkers: { markers: { label: string }[] } }).hbMarkers.markers;

describe('LiveRunChart phase markers', () => {
  it('draws a marker per phase and lists the phases as text', () => {
    const samples = [sample(0, { warmup: true, repeat: 0 }), sample(1), sample(2, { threads: 2 })];
    render(<LiveRunChart samples={samples} t0={1000} unit="GFLOP/s" theme="light" />);
    const fig = screen.getByRole('figure', { name: /Live throughput/ });
    expect(fig).toHaveAttribute('data-markers', '3');
    expect(markersOf().map((m) => m.label)).toEqual(['1 thread · warm-up', 'repeat 1', '2 threads · repeat 1']);
    expect(screen.getByText('Phases (3)')).toBeInTheDocument();
    expect(fig).toHaveTextContent('1 s: repeat 1');
  });

  it('keeps the options object while samples of the same phase stream in, and changes it at a new phase', () => {
    const { rerender } = render(<LiveRunChart samples={[sample(0), sample(1)]} t0={1000} unit="GFLOP/s" theme="light" />);
    const chart = chartSpies.instances[0]!;
    const plugins = chart.options.plugins;
    rerender(<LiveRunChart samples={[sample(0), sample(1), sample(2)]} t0={1000} unit="GFLOP/s" theme="light" />);
    expect(chartSpies.instances).toHaveLength(1);
    expect(chart.options.plugins).toBe(plugins); // options effect did not run
    rerender(<LiveRunChart samples={[sample(0), sample(1), sample(2), sample(3, { repeat: 2 })]} t0={1000} unit="GFLOP/s" theme="light" />);
    expect(markersOf().map((m) => m.label)).toEqual(['1 thread · repeat 1', 'repeat 2']);
  });
});

describe('LiveRunChart units', () => {
  it('names each line\'s unit when ops report different units (GPU)', () => {
    const samples = [sample(0, { op: 'fp32_fma', unit: 'GFLOP/s' }), sample(1, { op: 'dram_bw', unit: 'GB/s' })];
    render(<LiveRunChart samples={samples} t0={1000} unit="mixed" theme="light" />);
    const chart = chartSpies.instances[0]!;
    expect(chart.data.datasets.map((d) => d.label)).toEqual(['fp32_fma 1 thread (GFLOP/s)', 'dram_bw 1 thread (GB/s)']);
    expect((chart.options.scales as { y: { title: { text: string } } }).y.title.text).toBe('value (unit per line)');
  });
});
