// Live data limits. 20 000 points is ~5.5 h at one sample a second: enough for any CPU trace,
// small enough that a long-open tab does not grow without bound.
export const SAMPLE_BUFFER_MAX = 20_000;
/** Incoming SSE events are applied to React state in batches at most this often. */
export const SAMPLE_FLUSH_MS = 100;
/** Backoff when the browser gave up on an EventSource (HTTP error): we reopen from the last seq. */
export const RECONNECT_MIN_MS = 1_000;
export const RECONNECT_MAX_MS = 15_000;
/** A time step larger than this many sample intervals is drawn as a gap. */
export const GAP_FACTOR = 2;
/** Above this many points per dataset the chart decimates (LTTB) to the plot width. */
export const DECIMATION_SAMPLES = 800;
/** The live chart's and the CPU trace's LTTB decimation: to DECIMATION_SAMPLES once a line has twice that. */
export const LIVE_DECIMATION = { samples: DECIMATION_SAMPLES, threshold: DECIMATION_SAMPLES * 2 } as const;
