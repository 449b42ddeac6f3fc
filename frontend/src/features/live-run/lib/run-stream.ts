// One live subscription to /api/runs/{id}/events. The server sends the backlog after `after_seq`,
// then live `sample` events (id = seq), `run` events (RunPublic) and a final `end`. While the
// EventSource reconnects by itself it sends Last-Event-ID; if the browser gives up (HTTP error),
// we reopen from the last seq we hold. Duplicates from either path are dropped by seq.
import type { RunPublic, Sample } from '../../../lib/api/types';
import { apiUrl } from '../../../config/env';
import { RECONNECT_MAX_MS, RECONNECT_MIN_MS, SAMPLE_BUFFER_MAX, SAMPLE_FLUSH_MS } from '../../../config/live';
import { mergeSamples, parseJson, parseSample } from './sample-buffer';

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface RunStreamSnapshot {
  samples: Sample[];
  run: RunPublic | null;
  connection: ConnectionState;
  /** The server said `end`: the run is over and every sample has been delivered, unless `samplesComplete` is false. */
  ended: boolean;
  /** With `end`: false when the run's host had not sent every sample of the run when the server stopped waiting for
   * them (it ended the run, and the host was silent): a later visit may show more. Null until `end`. */
  samplesComplete: boolean | null;
  /** Highest seq received (kept even when the oldest points fall out of the buffer). */
  lastSeq: number;
  /** Start of the run on the samples' clock (UNIX s), from the first interval or kernel start. */
  t0: number | null;
  /** Total samples received over the life of the stream, duplicates excluded. */
  received: number;
}

export interface EventSourceLike {
  readonly readyState: number;
  onopen: ((ev: Event) => unknown) | null;
  onerror: ((ev: Event) => unknown) | null;
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void;
  close(): void;
}

export type EventSourceFactory = (url: string) => EventSourceLike;

export interface RunStreamOptions {
  maxPoints?: number;
  flushMs?: number;
  createEventSource?: EventSourceFactory;
}

const CLOSED = 2;

export function eventsUrl(runId: number, afterSeq: number): string {
  return apiUrl(`/api/runs/${runId}/events?after_seq=${afterSeq}`);
}

export class RunStream {
  private snapshot: RunStreamSnapshot = {
    samples: [], run: null, connection: 'connecting', ended: false, samplesComplete: null, lastSeq: -1, t0: null,
    received: 0,
  };
  private pending: Sample[] = [];
  private pendingRun: RunPublic | null = null;
  private es: EventSourceLike | null = null;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private retryMs = RECONNECT_MIN_MS;
  private stopped = false;
  private listeners = new Set<() => void>();
  private readonly max: number;
  private readonly flushMs: number;
  private readonly create: EventSourceFactory;

  constructor(private readonly runId: number, opts: RunStreamOptions = {}) {
    this.max = opts.maxPoints ?? SAMPLE_BUFFER_MAX;
    this.flushMs = opts.flushMs ?? SAMPLE_FLUSH_MS;
    this.create = opts.createEventSource ?? ((url) => new EventSource(url));
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): RunStreamSnapshot => this.snapshot;

  start(): void {
    this.stopped = false;
    this.open(this.snapshot.lastSeq);
  }

  stop(): void {
    this.stopped = true;
    this.es?.close();
    this.es = null;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.flushTimer = null;
    this.retryTimer = null;
  }

  private open(afterSeq: number): void {
    const es = this.create(eventsUrl(this.runId, afterSeq));
    this.es = es;
    es.onopen = () => {
      this.retryMs = RECONNECT_MIN_MS;
      this.set({ connection: 'open' });
    };
    es.addEventListener('sample', (ev) => {
      const s = parseSample(ev.data as string);
      if (!s) return;
      this.pending.push(s);
      this.scheduleFlush();
    });
    es.addEventListener('run', (ev) => {
      const run = parseJson<RunPublic>(ev.data as string);
      if (!run) return;
      this.pendingRun = run;
      this.scheduleFlush();
    });
    es.addEventListener('end', (ev) => {
      const end = parseJson<RunPublic & { samples_complete?: boolean }>(ev.data as string);
      let complete = true;
      if (end) {
        const { samples_complete: said, ...run } = end;
        this.pendingRun = run;
        complete = said !== false;
      }
      es.close();
      this.es = null;
      this.flush({ connection: 'closed', ended: true, samplesComplete: complete });
    });
    es.onerror = () => {
      if (this.stopped || this.snapshot.ended || this.es !== es) return;
      if (es.readyState === CLOSED) {
        // The browser will not retry (e.g. HTTP 5xx or a proxy cut); reopen from what we hold.
        es.close();
        this.es = null;
        this.flush({ connection: 'reconnecting' });
        const delay = this.retryMs;
        this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          if (!this.stopped) this.open(this.snapshot.lastSeq);
        }, delay);
      } else {
        this.set({ connection: 'reconnecting' });
      }
    };
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, this.flushMs);
  }

  private flush(extra: Partial<RunStreamSnapshot> = {}): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    const incoming = this.pending;
    this.pending = [];
    const prev = this.snapshot;
    const samples = mergeSamples(prev.samples, incoming, this.max);
    let lastSeq = prev.lastSeq;
    for (const s of incoming) if (s.seq > lastSeq) lastSeq = s.seq;
    const added = countAdded(prev.samples, samples, incoming.length);
    const first = samples[0];
    const t0 = prev.t0 ?? kernelStart(this.pendingRun ?? prev.run) ?? (first ? first.t - first.interval_s : null);
    const run = this.pendingRun ?? prev.run;
    this.pendingRun = null;
    this.set({ samples, lastSeq, t0, run, received: prev.received + added, ...extra });
  }

  private set(patch: Partial<RunStreamSnapshot>): void {
    this.snapshot = { ...this.snapshot, ...patch };
    for (const l of this.listeners) l();
  }
}

/** Samples that the merge actually added (the buffer may also have dropped its oldest). */
function countAdded(before: readonly Sample[], after: readonly Sample[], incoming: number): number {
  if (incoming === 0) return 0;
  if (after === before) return 0;
  const lastBefore = before[before.length - 1]?.seq ?? -Infinity;
  let n = 0;
  for (let i = after.length - 1; i >= 0 && (after[i] as Sample).seq > lastBefore; i--) n++;
  // Out-of-order inserts (rare) are not counted here; the figure is for display only.
  return n;
}

function kernelStart(run: RunPublic | null): number | null {
  const t = run?.kernel_info && (run.kernel_info as Record<string, unknown>).t;
  return typeof t === 'number' && Number.isFinite(t) ? t : null;
}
