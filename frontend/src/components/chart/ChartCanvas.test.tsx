import { render } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';

vi.mock('chart.js', async () => (await import('../../test/chart-mock')).chartJsMock());

import { chartSpies as spies, type FakeChart } from '../../test/chart-mock';
import { ChartCanvas } from './ChartCanvas';

type Pt = { x: number; y: number | null };
const data = (points: Pt[], label = '1 thread') => ({ datasets: [{ label, data: points }] });
const pts = (n: number): Pt[] => Array.from({ length: n }, (_, i) => ({ x: i, y: i }));

describe('ChartCanvas', () => {
  it('creates the Chart once, updates data and options in place, and destroys it on unmount', () => {
    const options = { animation: false as const, parsing: false as const };
    const { rerender, unmount } = render(<ChartCanvas type="line" data={data(pts(1))} options={options} label="chart" />);
    expect(spies.instances).toHaveLength(1);
    const chart = spies.instances[0] as FakeChart;
    const datasetObject = chart.data.datasets[0];

    for (let n = 2; n <= 5; n++) rerender(<ChartCanvas type="line" data={data(pts(n))} options={options} label="chart" />);
    expect(spies.instances).toHaveLength(1);
    expect(chart.data.datasets[0]).toBe(datasetObject); // same dataset object, new points
    expect(chart.data.datasets[0]?.data).toHaveLength(5);
    expect(spies.update).toHaveBeenLastCalledWith('none');

    const two = { datasets: [...data(pts(2)).datasets, ...data(pts(1), '2 threads').datasets] };
    rerender(<ChartCanvas type="line" data={two} options={{ ...options, normalized: true }} label="chart" />);
    expect(spies.instances).toHaveLength(1);
    expect(chart.data.datasets.map((d) => d.label)).toEqual(['1 thread', '2 threads']);
    expect(chart.data.datasets[0]).toBe(datasetObject);
    expect(chart.options).toMatchObject({ animation: false, parsing: false, normalized: true });

    expect(spies.destroy).not.toHaveBeenCalled();
    unmount();
    expect(spies.destroy).toHaveBeenCalledTimes(1);
  });
});
