import type { TooltipItem } from 'chart.js';
import { describe, expect, it } from 'vitest';
import { chartChrome, markerColors } from '../../config/chart';
import type { ChartMarker } from './plugins/markers';
import { themedAxis, timeSeriesOptions, traceLine } from './time-series';

const tooltipCtx = (label: string, y: number) => ({ dataset: { label }, parsed: { y } }) as unknown as TooltipItem<'line'>;

describe('themedAxis', () => {
  it('colours title, ticks and grid from the theme', () => {
    const { text, grid } = chartChrome.dark;
    expect(themedAxis('dark', 'GB/s')).toEqual({ title: { display: true, text: 'GB/s', color: text }, ticks: { color: text }, grid: { color: grid } });
    expect(themedAxis('light', '', false).title).toEqual({ display: false, text: '', color: chartChrome.light.text });
  });
});

describe('timeSeriesOptions', () => {
  it('gives the time-series chart block every line chart had', () => {
    const { text, grid } = chartChrome.light;
    const o = timeSeriesOptions({ theme: 'light', xTitle: 'seconds since run start', yTitle: 'GFLOP/s', decimation: { samples: 800, threshold: 1600 }, tooltipUnit: 'GFLOP/s' });
    expect(o).toMatchObject({
      animation: false,
      parsing: false,
      normalized: true,
      responsive: true,
      maintainAspectRatio: false,
      spanGaps: false,
      interaction: { mode: 'nearest', axis: 'x', intersect: false },
      scales: {
        x: { type: 'linear', min: 0, title: { display: true, text: 'seconds since run start', color: text }, ticks: { color: text }, grid: { color: grid } },
        y: { type: 'linear', beginAtZero: true, title: { display: true, text: 'GFLOP/s', color: text }, ticks: { color: text }, grid: { color: grid } },
      },
      plugins: {
        decimation: { enabled: true, algorithm: 'lttb', samples: 800, threshold: 1600 },
        legend: { labels: { color: text } },
      },
    });
    expect(o.plugins).not.toHaveProperty('hbMarkers');
    expect(o.plugins?.legend?.labels).not.toHaveProperty('filter');
  });

  it('labels the tooltip with the unit, or without one when each line names its own', () => {
    const base = { theme: 'light', xTitle: 'x', yTitle: 'y', decimation: { samples: 1, threshold: 2 } } as const;
    const withUnit = timeSeriesOptions({ ...base, tooltipUnit: 'GB/s' }).plugins?.tooltip?.callbacks?.label;
    const without = timeSeriesOptions(base).plugins?.tooltip?.callbacks?.label;
    expect(withUnit?.call({} as never, tooltipCtx('1 thread', 12.5))).toBe('1 thread: 12.5 GB/s');
    expect(without?.call({} as never, tooltipCtx('1 thread (GB/s)', 12.5))).toBe('1 thread (GB/s): 12.5');
  });

  it('passes markers, bands and the legend filter through in the theme colours', () => {
    const markers: ChartMarker[] = [{ x: 3, label: 'repeat 1', kind: 'repeat' }];
    const filter = () => true;
    const base = { theme: 'dark', xTitle: 'x', yTitle: 'y', decimation: { samples: 1, threshold: 2 }, markers } as const;
    const live = timeSeriesOptions({ ...base, legendFilter: filter });
    expect(live.plugins?.hbMarkers).toEqual({ markers, colors: markerColors.dark, labelColor: chartChrome.dark.text });
    expect(live.plugins?.legend?.labels?.filter).toBe(filter);
    const bands = [{ from: 1, to: 2, kind: 'alert' as const }];
    expect(timeSeriesOptions({ ...base, bands }).plugins?.hbMarkers).toEqual({
      markers, bands, colors: markerColors.dark, labelColor: chartChrome.dark.text,
    });
  });
});

describe('traceLine', () => {
  it('draws a thin line without points that keeps its gaps', () => {
    const points = [{ x: 0, y: 1 }];
    expect(traceLine('run #1', points, '#123456')).toEqual({
      label: 'run #1', data: points, borderColor: '#123456', backgroundColor: '#123456', borderWidth: 1.5, pointRadius: 0, spanGaps: false, tension: 0,
    });
  });
});
