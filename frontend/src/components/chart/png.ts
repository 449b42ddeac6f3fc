// PNG of a chart as the person sees it: the chart canvas is transparent, so the page's card colour
// (light or dark theme) is painted underneath before encoding.

export type CanvasFactory = () => HTMLCanvasElement;

/** A PNG data URL of `source` over `background`, or null when the browser gives no 2D context. */
export function composePng(
  source: HTMLCanvasElement,
  background: string,
  create: CanvasFactory = () => document.createElement('canvas'),
): string | null {
  const out = create();
  out.width = source.width;
  out.height = source.height;
  const ctx = out.getContext('2d');
  if (!ctx) return null;
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(source, 0, 0);
  return out.toDataURL('image/png');
}

/** The themed card background behind charts (CSS custom property), white if unset. */
export function chartBackground(el: Element): string {
  const v = getComputedStyle(el).getPropertyValue('--bg-elev').trim();
  return v || '#ffffff';
}
