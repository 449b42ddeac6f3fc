// Error bars (whiskers) on bar charts, our own ~50 lines instead of a plugin dependency. A bar
// dataset may carry `errorBars: [{low, high} | null, ...]` in value space (the backend's
// mean − stddev .. mean + stddev); the plugin draws a vertical line with caps over each bar.
import type { Chart, ChartType, Plugin } from 'chart.js';

export interface ErrorBar {
  low: number;
  high: number;
}

export interface ErrorBarsOptions {
  color?: string;
  lineWidth?: number;
}

declare module 'chart.js' {
  // Merged into Chart.js' own interface, so the type parameter keeps its name (and stays unused).
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface PluginOptionsByType<TType extends ChartType> {
    hbErrorBars?: ErrorBarsOptions;
  }
  interface BarControllerDatasetOptions {
    /** One whisker per data point, in the value axis' units; null = none. */
    errorBars: (ErrorBar | null)[];
  }
}

export interface Whisker {
  x: number;
  top: number;
  bottom: number;
  /** Half the cap width in pixels. */
  half: number;
}

/** Pixel geometry of one whisker: x at the bar's centre, caps a quarter of the bar wide (2–8 px). */
export function whisker(x: number, barWidth: number, bar: ErrorBar, toPixel: (v: number) => number): Whisker | null {
  if (!Number.isFinite(bar.low) || !Number.isFinite(bar.high) || !Number.isFinite(x)) return null;
  const a = toPixel(bar.low);
  const b = toPixel(bar.high);
  const half = Math.min(8, Math.max(2, (Number.isFinite(barWidth) ? barWidth : 8) / 4));
  return { x, top: Math.min(a, b), bottom: Math.max(a, b), half };
}

/** mean ± stddev as an error bar; null where there is no spread to show. */
export function stddevBar(mean: number | null | undefined, stddev: number | null | undefined): ErrorBar | null {
  if (mean === null || mean === undefined || stddev === null || stddev === undefined) return null;
  if (!Number.isFinite(mean) || !Number.isFinite(stddev) || stddev <= 0) return null;
  return { low: mean - stddev, high: mean + stddev };
}

export const errorBarsPlugin: Plugin<'bar', ErrorBarsOptions> = {
  id: 'hbErrorBars',
  defaults: { color: '#52525b', lineWidth: 1.5 },
  afterDatasetsDraw(chart: Chart<'bar'>, _args, opts) {
    const { ctx } = chart;
    ctx.save();
    ctx.strokeStyle = opts.color ?? '#52525b';
    ctx.lineWidth = opts.lineWidth ?? 1.5;
    chart.data.datasets.forEach((ds, i) => {
      const bars = (ds as { errorBars?: (ErrorBar | null)[] }).errorBars;
      if (!bars || !chart.isDatasetVisible(i)) return;
      const meta = chart.getDatasetMeta(i);
      const scale = chart.scales[meta.yAxisID ?? 'y'];
      if (!scale) return;
      meta.data.forEach((el, j) => {
        const bar = bars[j];
        if (!bar) return;
        const { x, width } = el.getProps(['x', 'width'], true) as { x: number; width: number };
        const w = whisker(x, width, bar, (v) => scale.getPixelForValue(v));
        if (!w) return;
        ctx.beginPath();
        ctx.moveTo(w.x, w.top);
        ctx.lineTo(w.x, w.bottom);
        ctx.moveTo(w.x - w.half, w.top);
        ctx.lineTo(w.x + w.half, w.top);
        ctx.moveTo(w.x - w.half, w.bottom);
        ctx.lineTo(w.x + w.half, w.bottom);
        ctx.stroke();
      });
    });
    ctx.restore();
  },
};
