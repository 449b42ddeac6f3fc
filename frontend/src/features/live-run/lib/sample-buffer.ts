// The bounded, seq-ordered, duplicate-free sample buffer behind useRunSamples. Pure functions, so
// the rules (no duplicates after a reconnect, oldest dropped first, order by seq) are tested directly.
import type { Sample } from '../../../lib/api/types';

/** Merge incoming samples into a buffer sorted by seq; duplicates (same seq) are ignored. */
export function mergeSamples(buffer: readonly Sample[], incoming: readonly Sample[], max: number): Sample[] {
  if (incoming.length === 0) return buffer as Sample[];
  const out = buffer.slice();
  for (const s of incoming) {
    const last = out[out.length - 1];
    if (last === undefined || s.seq > last.seq) {
      out.push(s);
      continue;
    }
    const i = lowerBound(out, s.seq);
    if (out[i]?.seq === s.seq) continue;
    out.splice(i, 0, s);
  }
  return out.length > max ? out.slice(out.length - max) : out;
}

function lowerBound(arr: readonly Sample[], seq: number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((arr[mid] as Sample).seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Parse one SSE `sample` payload; anything malformed is dropped rather than drawn. */
export function parseSample(data: string): Sample | null {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return null;
  }
  if (!isRecord(v) || !Number.isInteger(v.seq) || !isNum(v.t) || !(v.value === null || isNum(v.value))) return null;
  return {
    seq: v.seq as number,
    t: v.t,
    interval_s: isNum(v.interval_s) ? v.interval_s : 1,
    threads: isNum(v.threads) ? v.threads : 0,
    repeat: isNum(v.repeat) ? v.repeat : 0,
    warmup: v.warmup === true,
    value: v.value as number,
    unit: typeof v.unit === 'string' ? v.unit : '',
    op: typeof v.op === 'string' ? v.op : null,
    block_bytes: isNum(v.block_bytes) ? v.block_bytes : null,
  } as Sample;
}

export function parseJson<T>(data: string): T | null {
  try {
    const v: unknown = JSON.parse(data);
    return isRecord(v) ? (v as T) : null;
  } catch {
    return null;
  }
}
