// Overlaid traces: up to 10 runs × 600 samples on one linear axis. Drawn without parsing
// (points are {x, y} already), normalized (sorted, unique x), no animation, and LTTB-decimated per
// run to a few hundred points, so the overlay stays smooth on a laptop.
import { useId, useMemo } from 'react';
import type { ChartData } from 'chart.js';
import { ChartCanvas } from '../../../components/chart/ChartCanvas';
import { timeSeriesOptions, traceLine } from '../../../components/chart/time-series';
import { OVERLAY_DECIMATION, seriesPalette } from '../../../config/chart';
import type { Sample } from '../../../lib/api/types';
import type { Point } from '../../../lib/series';
import type { Theme } from '../../../lib/theme';
import { tracePoints } from '../lib/overlay';

export interface OverlayTrace {
  runId: number;
  label: string;
  samples: Sample[] | undefined;
  unit: string;
}

export function TraceOverlay({ traces, theme, loading }: { traces: OverlayTrace[]; theme: Theme; loading: boolean }) {
  const captionId = useId();
  const lines = useMemo(() => traces.map((t) => ({ ...t, points: t.samples ? tracePoints(t.samples) : ([] as Point[]) })), [traces]);
  const unit = traces[0]?.unit ?? '';

  const data = useMemo<ChartData<'line', Point[]>>(
    () => ({
      datasets: lines.map((l, i) => traceLine(l.label, l.points, seriesPalette[i % seriesPalette.length] as string)),
    }),
    [lines],
  );

  const options = useMemo(
    () =>
      timeSeriesOptions({ theme, xTitle: 'seconds since each run started', yTitle: unit, decimation: OVERLAY_DECIMATION, tooltipUnit: unit }),
    [theme, unit],
  );

  const total = lines.reduce((n, l) => n + l.points.length, 0);
  return (
    <figure className="chart-figure" aria-labelledby={captionId} data-points={total} data-traces={lines.length}>
      <figcaption id={captionId} className="chart-caption">
        <span className="chart-title">Traces overlaid</span>
        <span className="muted small">
          {unit} per second, each run from its own start{loading ? ' · loading samples…' : ''}
        </span>
      </figcaption>
      <ChartCanvas
        type="line"
        data={data}
        options={options}
        height={340}
        label={`Traces overlaid: ${lines.map((l) => `${l.label} ${l.points.length} samples`).join('; ')}`}
        png={{ fileName: 'hostbench-compare-traces.png', title: 'Traces overlaid' }}
      />
    </figure>
  );
}
