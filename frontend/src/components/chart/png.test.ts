import { describe, expect, it, vi } from 'vitest';
import { composePng } from './png';

describe('composePng', () => {
  it('paints the theme background under the chart, then encodes a PNG of the same size', () => {
    const calls: string[] = [];
    const ctx = {
      set fillStyle(v: string) {
        calls.push(`fill ${v}`);
      },
      fillRect: vi.fn((...a: number[]) => calls.push(`rect ${a.join(',')}`)),
      drawImage: vi.fn(() => calls.push('draw')),
    };
    const out = { width: 0, height: 0, getContext: () => ctx, toDataURL: vi.fn(() => 'data:image/png;base64,AAA') };
    const source = { width: 640, height: 320 } as HTMLCanvasElement;
    const url = composePng(source, '#18181b', () => out as unknown as HTMLCanvasElement);
    expect(url).toBe('data:image/png;base64,AAA');
    expect(out).toMatchObject({ width: 640, height: 320 });
    expect(calls).toEqual(['fill #18181b', 'rect 0,0,640,320', 'draw']);
    expect(ctx.drawImage).toHaveBeenCalledWith(source, 0, 0);
    expect(out.toDataURL).toHaveBeenCalledWith('image/png');
  });

  it('gives null when the browser has no 2D context', () => {
    const out = { width: 0, height: 0, getContext: () => null };
    expect(composePng({ width: 1, height: 1 } as HTMLCanvasElement, '#fff', () => out as unknown as HTMLCanvasElement)).toBeNull();
  });
});
