// The one chart wrapper. It owns the canvas: the Chart is created once per mount, later data and
// options are applied to the same instance in place (update('none'): no animation, no re-layout of
// unchanged datasets), and it is destroyed on unmount. Datasets are matched by label so Chart.js
// keeps its per-dataset state (and the decimation plugin its original data) across updates.
import { useEffect, useLayoutEffect, useRef } from 'react';
import type { ChartData, ChartDataset, ChartOptions, ChartType, DefaultDataPoint } from 'chart.js';
import { downloadUrl } from '../../lib/download';
import { chartBackground, composePng } from './png';
import { Chart } from './register';

export interface ChartCanvasProps<T extends ChartType> {
  type: T;
  data: ChartData<T, DefaultDataPoint<T>>;
  options: ChartOptions<T>;
  /** Accessible name of the canvas (role="img"); the figure should also offer a text alternative. */
  label: string;
  className?: string;
  height?: number;
  /** Offer a "PNG" button that saves the chart over the page's background, under this file name. */
  png?: { fileName: string; title: string };
}

type AnyDataset = ChartDataset<ChartType, unknown[]>;

function datasetKey(d: { label?: string }, i: number): string {
  return d.label ?? `#${i}`;
}

/** Apply next datasets onto the chart's data object, reusing dataset objects by label. */
export function applyData(current: ChartData, next: ChartData): void {
  const existing = new Map<string, AnyDataset>();
  (current.datasets as AnyDataset[]).forEach((d, i) => existing.set(datasetKey(d, i), d));
  current.datasets = (next.datasets as AnyDataset[]).map((nd, i) => {
    const d = existing.get(datasetKey(nd, i));
    if (!d) return { ...nd };
    Object.assign(d, nd);
    return d;
  }) as ChartData['datasets'];
  if (next.labels) current.labels = next.labels;
}

export function ChartCanvas<T extends ChartType>({ type, data, options, label, className, height = 320, png }: ChartCanvasProps<T>) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const chartRef = useRef<Chart<T> | null>(null);
  const latest = useRef({ data, options });
  useLayoutEffect(() => {
    latest.current = { data, options };
  });

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const init = latest.current;
    const chart = new Chart<T>(canvas, {
      type,
      data: { ...init.data, datasets: init.data.datasets.map((d) => ({ ...d })) },
      options: { ...init.options },
    });
    chartRef.current = chart;
    return () => {
      chart.destroy();
      chartRef.current = null;
    };
  }, [type]);

  useEffect(() => {
    const chart = chartRef.current;
    if (!chart) return;
    applyData(chart.data as ChartData, data as ChartData);
    chart.update('none');
  }, [data]);

  useEffect(() => {
    const chart = chartRef.current;
    if (!chart) return;
    if (chart.options) Object.assign(chart.options, options);
    else chart.options = options as typeof chart.options;
    chart.update('none');
  }, [options]);

  const savePng = () => {
    const canvas = canvasRef.current;
    if (!canvas || !png) return;
    const url = composePng(canvas, chartBackground(canvas));
    if (url) downloadUrl(url, png.fileName);
  };

  return (
    <>
      <div className={className ?? 'chart-box'} style={{ height }}>
        <canvas ref={canvasRef} role="img" aria-label={label} />
      </div>
      {png ? (
        <div className="chart-actions">
          <button type="button" className="button button-small" onClick={savePng} aria-label={`Download PNG of ${png.title}`}>
            PNG
          </button>
        </div>
      ) : null}
    </>
  );
}
