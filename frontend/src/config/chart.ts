// Chart colours, per theme. Series colours are read in both themes; one per thread count, cycled.
export const seriesPalette = ['#3b82f6', '#f97316', '#10b981', '#e11d48', '#8b5cf6', '#eab308', '#06b6d4', '#ec4899'];
export const warmupColor = '#9ca3af';
export const chartChrome: Record<'light' | 'dark', { text: string; grid: string }> = {
  light: { text: '#52525b', grid: '#e4e4e7' },
  dark: { text: '#a1a1aa', grid: '#3f3f46' },
};
/** Outline of a bar whose figure the backend flagged invalid, and the throttling marker. */
export const invalidColor = '#dc2626';
/** Marker line colours per theme (phase changes, repeats, warm-up, alerts such as throttling). */
export const markerColors: Record<'light' | 'dark', { config: string; repeat: string; warmup: string; alert: string; lost: string }> = {
  light: { config: '#71717a', repeat: '#d4d4d8', warmup: '#9ca3af', alert: '#dc2626', lost: '#d97706' },
  dark: { config: '#a1a1aa', repeat: '#52525b', warmup: '#6b7280', alert: '#f87171', lost: '#fbbf24' },
};
/** Compare overlay: each 600-sample trace is decimated (LTTB) to this many points once it has more. */
export const OVERLAY_DECIMATION = { samples: 300, threshold: 400 } as const;
