// jsdom has no canvas: component tests replace chart.js with this stand-in, which records every
// Chart constructed (its config) and every update/destroy. Use it as
//   vi.mock('chart.js', async () => (await import('<path>/test/chart-mock')).chartJsMock());
import { vi } from 'vitest';

export interface FakeChart {
  canvas: unknown;
  type: string;
  data: { labels?: unknown[]; datasets: Record<string, unknown>[] };
  options: Record<string, unknown>;
  update: (mode?: string) => void;
  destroy: () => void;
}

export const chartSpies = {
  instances: [] as FakeChart[],
  update: vi.fn(),
  destroy: vi.fn(),
  reset() {
    this.instances.length = 0;
    this.update.mockReset();
    this.destroy.mockReset();
  },
};

export function chartJsMock() {
  class Chart {
    static register = vi.fn();
    canvas: unknown;
    type: string;
    data: unknown;
    options: unknown;
    update = chartSpies.update;
    destroy = chartSpies.destroy;
    constructor(canvas: unknown, config: { type: string; data: unknown; options: unknown }) {
      this.canvas = canvas;
      this.type = config.type;
      this.data = config.data;
      this.options = config.options;
      chartSpies.instances.push(this as unknown as FakeChart);
    }
  }
  const names = [
    'BarController', 'BarElement', 'CategoryScale', 'Decimation', 'Legend', 'LineController', 'LineElement', 'LinearScale',
    'PointElement', 'Tooltip',
  ];
  return { Chart, ...Object.fromEntries(names.map((n) => [n, {}])) };
}
