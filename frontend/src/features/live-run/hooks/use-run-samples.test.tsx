import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run, sample } from '../../../test/fixtures';
import type { EventSourceLike } from '../lib/run-stream';
import { useRunSamples } from './use-run-samples';

// A stand-in for the browser's EventSource: tests push named events and errors into it.
class FakeEventSource implements EventSourceLike {
  static instances: FakeEventSource[] = [];
  readyState = 0;
  onopen: ((ev: Event) => unknown) | null = null;
  onerror: ((ev: Event) => unknown) | null = null;
  closed = false;
  private listeners = new Map<string, ((ev: MessageEvent) => void)[]>();
  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }
  addEventListener(type: string, l: (ev: MessageEvent) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), l]);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  open() {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
  }
  emit(type: string, data: unknown, id?: string) {
    const ev = new MessageEvent(type, { data: JSON.stringify(data), lastEventId: id ?? '' });
    for (const l of this.listeners.get(type) ?? []) l(ev);
  }
  fail(permanently: boolean) {
    this.readyState = permanently ? 2 : 0;
    this.onerror?.(new Event('error'));
  }
}

const opts = { flushMs: 10, createEventSource: (url: string) => new FakeEventSource(url) };
const latest = () => FakeEventSource.instances[FakeEventSource.instances.length - 1] as FakeEventSource;

beforeEach(() => {
  FakeEventSource.instances = [];
  vi.useFakeTimers();
});
afterEach(() => vi.useRealTimers());

describe('useRunSamples', () => {
  it('subscribes from the beginning, batches samples, dedupes replays by seq, and tracks the run', () => {
    const { result } = renderHook(() => useRunSamples(7, opts));
    expect(FakeEventSource.instances).toHaveLength(1);
    expect(latest().url).toMatch(/\/api\/runs\/7\/events\?after_seq=-1$/);
    expect(result.current.connection).toBe('connecting');

    act(() => {
      latest().open();
      latest().emit('run', run({ progress: 0.1 }));
      for (const s of [0, 1, 2, 1, 2]) latest().emit('sample', sample(s), String(s));
    });
    expect(result.current.connection).toBe('open');
    expect(result.current.samples).toHaveLength(0); // not yet flushed: one render per batch
    act(() => void vi.advanceTimersByTime(10));
    expect(result.current.samples.map((s) => s.seq)).toEqual([0, 1, 2]);
    expect(result.current.received).toBe(3);
    expect(result.current.lastSeq).toBe(2);
    expect(result.current.run?.progress).toBe(0.1);
    expect(result.current.t0).toBe(1000); // first interval's start
  });

  it('lets the browser reconnect by itself, and reopens from the last seq if the browser gives up', () => {
    const { result } = renderHook(() => useRunSamples(7, opts));
    act(() => {
      latest().open();
      latest().emit('sample', sample(0));
      latest().emit('sample', sample(1));
      vi.advanceTimersByTime(10);
    });
    act(() => latest().fail(false)); // transient: EventSource retries with Last-Event-ID
    expect(result.current.connection).toBe('reconnecting');
    expect(FakeEventSource.instances).toHaveLength(1);

    act(() => latest().fail(true)); // closed for good (e.g. HTTP 502)
    expect(FakeEventSource.instances).toHaveLength(1);
    act(() => void vi.advanceTimersByTime(1000));
    expect(FakeEventSource.instances).toHaveLength(2);
    expect(latest().url).toMatch(/after_seq=1$/);

    act(() => {
      latest().open();
      latest().emit('sample', sample(1)); // overlap is harmless
      latest().emit('sample', sample(2));
      vi.advanceTimersByTime(10);
    });
    expect(result.current.samples.map((s) => s.seq)).toEqual([0, 1, 2]);
    expect(result.current.connection).toBe('open');
  });

  it('closes on end, keeps the final run, and does not reconnect', () => {
    const { result } = renderHook(() => useRunSamples(7, opts));
    act(() => {
      latest().open();
      latest().emit('sample', sample(0));
      latest().emit('end', run({ status: 'succeeded', progress: 1 }));
    });
    expect(result.current.ended).toBe(true);
    expect(result.current.connection).toBe('closed');
    expect(result.current.run?.status).toBe('succeeded');
    expect(result.current.samples).toHaveLength(1);
    expect(latest().closed).toBe(true);
    act(() => {
      latest().fail(true);
      vi.advanceTimersByTime(60_000);
    });
    expect(FakeEventSource.instances).toHaveLength(1);
  });

  it('closes the stream on unmount and opens a new one for another run', () => {
    const { rerender, unmount } = renderHook(({ id }) => useRunSamples(id, opts), { initialProps: { id: 7 } });
    const first = latest();
    rerender({ id: 8 });
    expect(first.closed).toBe(true);
    expect(latest().url).toMatch(/\/api\/runs\/8\/events/);
    unmount();
    expect(latest().closed).toBe(true);
  });

  it('stays within the bounded buffer', () => {
    const { result } = renderHook(() => useRunSamples(7, { ...opts, maxPoints: 5 }));
    act(() => {
      for (let i = 0; i < 12; i++) latest().emit('sample', sample(i));
      vi.advanceTimersByTime(10);
    });
    expect(result.current.samples.map((s) => s.seq)).toEqual([7, 8, 9, 10, 11]);
    expect(result.current.lastSeq).toBe(11);
  });
});
