// Chart colours, per theme. Series colours are read in both themes; one per thread count, cycled.
export const seriesPalette = ['#3b82f6', '#f97316', '#10b981', '#e11d48', '#8b5cf6', '#eab308', '#06b6d4', '#ec4899'];
export const warmupColor = '#9ca3af';
export const chartChrome: Record<'light' | 'dark', { text: string; grid: string }> = {
  light: { text: '#52525b', grid: '#e4e4e7' },
  dark: { text: '#a1a1aa', grid: '#3f3f46' },
};
