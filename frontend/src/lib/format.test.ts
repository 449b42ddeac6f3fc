import { describe, expect, it } from 'vitest';
import { formatMeanSd, paramSummary } from './format';

describe('paramSummary', () => {
  it('writes lists with commas and objects as JSON, never "[object Object]"', () => {
    expect(paramSummary({ op: 'udp_stream', sizes: [1, 1024], reference_ports: { iperf3: 5201 } })).toBe(
      'op=udp_stream sizes=1,1024 reference_ports={"iperf3":5201}',
    );
    expect(paramSummary({ items: [{ a: 1 }, 2] })).toBe('items={"a":1},2');
    expect(paramSummary(null)).toBe('');
  });
});

describe('formatMeanSd', () => {
  it('gives a spread from two repeats on, and says one repeat has none (not "± 0.00")', () => {
    expect(formatMeanSd(47.666, 0.12, 3, 2)).toBe('47.67 ± 0.12');
    expect(formatMeanSd(47.666, 0, 1, 2)).toBe('47.67 (one repeat)');
    expect(formatMeanSd(47.666, null, null, 2)).toBe('47.67 ± —');
  });
});
