// Vertical marker lines with a short label on a linear x axis: the live chart's phase changes
// (warm-up, each repeat, each thread count or block size) and the trace's throttling point. Labels
// that would overlap stack in a few rows; a label with no room left is dropped, its line stays.
import type { Chart, ChartType, Plugin } from 'chart.js';

export type MarkerKind = 'config' | 'repeat' | 'warmup' | 'alert' | 'lost';

export interface ChartMarker {
  x: number;
  label: string;
  kind: MarkerKind;
}

/** A shaded x range (a trace's stretch where the rate fell), in its marker kind's colour. */
export interface ChartBand {
  from: number;
  to: number;
  kind: MarkerKind;
}

export interface MarkersOptions {
  markers?: ChartMarker[];
  bands?: ChartBand[];
  /** Line colours per kind (repeat lines are faint on purpose). */
  colors?: Partial<Record<MarkerKind, string>>;
  /** Label text colour (alerts keep their own colour); readable in both themes. */
  labelColor?: string;
  font?: string;
}

declare module 'chart.js' {
  // Merged into Chart.js' own interface, so the type parameter keeps its name (and stays unused).
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface PluginOptionsByType<TType extends ChartType> {
    hbMarkers?: MarkersOptions;
  }
}

export interface PlacedMarker {
  marker: ChartMarker;
  px: number;
  /** Where the label's text starts (left edge), or null when it has no room. */
  labelX: number | null;
  row: number;
}

const PAD = 3;

/**
 * Pixel placement of markers inside [left, right]. Alerts are placed first so they always keep their
 * label; then the rest left to right. A label goes right of its line, or left of it at the right
 * edge, in the first of `rows` rows where it overlaps no earlier label.
 */
export function placeMarkers(
  markers: readonly ChartMarker[],
  toPixel: (x: number) => number,
  left: number,
  right: number,
  textWidth: (s: string) => number,
  rows = 3,
): PlacedMarker[] {
  const occupied: [number, number][][] = Array.from({ length: rows }, () => []);
  const visible = markers
    .map((marker) => ({ marker, px: toPixel(marker.x) }))
    .filter(({ px }) => Number.isFinite(px) && px >= left - 0.5 && px <= right + 0.5);
  const urgent = (m: ChartMarker) => (m.kind === 'alert' || m.kind === 'lost' ? 0 : 1);
  const order = [...visible].sort((a, b) => urgent(a.marker) - urgent(b.marker) || a.px - b.px);
  const placed = new Map<(typeof visible)[number], PlacedMarker>();
  for (const v of order) {
    const w = textWidth(v.marker.label);
    let start = v.px + PAD;
    if (start + w > right) start = v.px - PAD - w;
    if (start < left) start = left;
    const end = start + w;
    let row = -1;
    for (let r = 0; r < rows && row < 0; r++) {
      if ((occupied[r] as [number, number][]).every(([a, b]) => end + PAD <= a || start >= b + PAD)) row = r;
    }
    if (row >= 0 && v.marker.label) {
      (occupied[row] as [number, number][]).push([start, end]);
      placed.set(v, { marker: v.marker, px: v.px, labelX: start, row });
    } else {
      placed.set(v, { marker: v.marker, px: v.px, labelX: null, row: 0 });
    }
  }
  return visible.map((v) => placed.get(v) as PlacedMarker);
}

const DEFAULT_COLORS: Record<MarkerKind, string> = {
  config: '#71717a',
  repeat: '#a1a1aa',
  warmup: '#9ca3af',
  alert: '#dc2626',
  lost: '#d97706',
};

export const markersPlugin: Plugin<ChartType, MarkersOptions> = {
  id: 'hbMarkers',
  defaults: { markers: [], font: '11px system-ui, sans-serif' },
  beforeDatasetsDraw(chart: Chart, _args, opts) {
    const bands = opts.bands ?? [];
    const scale = chart.scales.x;
    if (!bands.length || !scale) return;
    const { ctx, chartArea } = chart;
    const colors = { ...DEFAULT_COLORS, ...(opts.colors ?? {}) };
    ctx.save();
    ctx.globalAlpha = 0.14;
    for (const b of bands) {
      const x0 = Math.max(chartArea.left, scale.getPixelForValue(b.from));
      const x1 = Math.min(chartArea.right, scale.getPixelForValue(b.to));
      if (!(x1 > x0)) continue;
      ctx.fillStyle = colors[b.kind];
      ctx.fillRect(x0, chartArea.top, x1 - x0, chartArea.bottom - chartArea.top);
    }
    ctx.restore();
  },
  afterDatasetsDraw(chart: Chart, _args, opts) {
    const markers = opts.markers ?? [];
    const scale = chart.scales.x;
    if (!markers.length || !scale) return;
    const { ctx, chartArea } = chart;
    const colors = { ...DEFAULT_COLORS, ...(opts.colors ?? {}) };
    ctx.save();
    ctx.font = opts.font ?? '11px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    const placed = placeMarkers(
      markers,
      (x) => scale.getPixelForValue(x),
      chartArea.left,
      chartArea.right,
      (s) => ctx.measureText(s).width,
    );
    for (const p of placed) {
      const color = colors[p.marker.kind];
      ctx.strokeStyle = color;
      ctx.lineWidth = p.marker.kind === 'alert' || p.marker.kind === 'lost' ? 2 : 1;
      ctx.setLineDash(p.marker.kind === 'config' || p.marker.kind === 'alert' ? [] : [3, 3]);
      ctx.beginPath();
      ctx.moveTo(p.px, chartArea.top);
      ctx.lineTo(p.px, chartArea.bottom);
      ctx.stroke();
      if (p.labelX !== null) {
        ctx.fillStyle = p.marker.kind === 'alert' || p.marker.kind === 'lost' ? color : (opts.labelColor ?? '#52525b');
        ctx.fillText(p.marker.label, p.labelX, chartArea.top + 2 + p.row * 13);
      }
    }
    ctx.restore();
  },
};
