import { render } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';

// jsdom has no canvas; a spy Chart stands in so we can count constructions and updates.
type Pt = { x: number; y: number | null };
interface FakeChart {
  data: { datasets: { label: string; data: Pt[] }[] };
  options: Record<string, unknown>;
  update: (mode?: string) => void;
  destroy: () => void;
}
const spies = vi.hoisted(() => ({ instances: [] as unknown[], update: vi.fn(), destroy: vi.fn() }));
vi.mock('chart.js', () => {
  class Chart {
    static register = vi.fn();
    data: unknown;
    options: unknown;
    update = spies.update;
    destroy = spies.destroy;
    constructor(_canvas: unknown, config: { data: unknown; options: unknown }) {
      spies.instances.push(this);
      this.data = config.data;
      this.options = config.options;
    }
  }
  return { Chart, Decimation: {}, Legend: {}, LineController: {}, LineElement: {}, LinearScale: {}, PointElement: {}, Tooltip: {} };
});

import { ChartCanvas } from './ChartCanvas';

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
