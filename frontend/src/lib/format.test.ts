import { describe, expect, it } from 'vitest';
import { paramSummary } from './format';

describe('paramSummary', () => {
  it('writes lists with commas and objects as JSON, never "[object Object]"', () => {
    expect(paramSummary({ op: 'udp_stream', sizes: [1, 1024], reference_ports: { iperf3: 5201 } })).toBe(
      'op=udp_stream sizes=1,1024 reference_ports={"iperf3":5201}',
    );
    expect(paramSummary({ items: [{ a: 1 }, 2] })).toBe('items={"a":1},2');
    expect(paramSummary(null)).toBe('');
  });
});
