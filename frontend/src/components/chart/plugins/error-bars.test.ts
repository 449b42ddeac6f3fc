import { describe, expect, it } from 'vitest';
import { stddevBar, whisker } from './error-bars';

// A y scale like Chart.js': value 0 at pixel 300, 100 at pixel 100 (pixels grow downwards).
const toPixel = (v: number) => 300 - 2 * v;

describe('error bars', () => {
  it('turns mean ± stddev into a whisker from mean − sd to mean + sd', () => {
    expect(stddevBar(50, 5)).toEqual({ low: 45, high: 55 });
    expect(stddevBar(50, 0)).toBeNull();
    expect(stddevBar(50, null)).toBeNull();
    expect(stddevBar(null, 5)).toBeNull();
  });

  it('places the whisker at the bar centre, top above bottom, caps a quarter of the bar wide', () => {
    expect(whisker(120, 40, { low: 45, high: 55 }, toPixel)).toEqual({ x: 120, top: 190, bottom: 210, half: 8 });
    expect(whisker(120, 20, { low: 45, high: 55 }, toPixel)?.half).toBe(5);
    expect(whisker(120, 2, { low: 45, high: 55 }, toPixel)?.half).toBe(2);
  });

  it('draws nothing for a non-finite bound', () => {
    expect(whisker(120, 40, { low: Number.NaN, high: 55 }, toPixel)).toBeNull();
  });
});
