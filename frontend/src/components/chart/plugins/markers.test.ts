import { describe, expect, it } from 'vitest';
import { placeMarkers, type ChartMarker } from './markers';

// x axis: value v at pixel 100 + 10 v; the plot spans pixels 100..600; every character is 6 px.
const toPixel = (x: number) => 100 + 10 * x;
const width = (s: string) => s.length * 6;

const m = (x: number, label: string, kind: ChartMarker['kind'] = 'repeat'): ChartMarker => ({ x, label, kind });

describe('placeMarkers', () => {
  it('drops markers outside the plot and puts labels right of their line', () => {
    const placed = placeMarkers([m(-5, 'before'), m(10, 'repeat 1'), m(70, 'after')], toPixel, 100, 600, width);
    expect(placed).toHaveLength(1);
    expect(placed[0]).toMatchObject({ px: 200, labelX: 203, row: 0 });
  });

  it('stacks overlapping labels in rows, and drops a label with no room left (its line stays)', () => {
    const placed = placeMarkers([m(0, 'warm-up'), m(1, 'repeat 1'), m(2, 'repeat 2'), m(3, 'repeat 3')], toPixel, 100, 600, width, 3);
    expect(placed.map((p) => p.row)).toEqual([0, 1, 2, 0]);
    expect(placed[3]?.labelX).toBeNull();
    expect(placed.map((p) => p.px)).toEqual([100, 110, 120, 130]);
  });

  it('puts a label left of its line at the right edge', () => {
    const [p] = placeMarkers([m(49, 'end')], toPixel, 100, 600, width);
    expect(p?.labelX).toBe(590 - 3 - 18);
  });

  it('places alerts (throttling) first so they always keep their label', () => {
    const placed = placeMarkers([m(1, 'repeat 1'), m(1.5, 'repeat 2'), m(1.2, 'throttling', 'alert')], toPixel, 100, 600, width, 1);
    expect(placed.find((p) => p.marker.kind === 'alert')).toMatchObject({ labelX: 115, row: 0 });
    expect(placed.filter((p) => p.labelX === null)).toHaveLength(2);
  });
});
