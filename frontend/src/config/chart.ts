// Series colours; read in both themes. One colour per thread count, cycled.
export const seriesPalette = ['#3b82f6', '#f97316', '#10b981', '#e11d48', '#8b5cf6', '#eab308', '#06b6d4', '#ec4899'];
export const warmupColor = '#9ca3af';
