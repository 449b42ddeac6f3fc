import { describe, expect, it } from 'vitest';
import { run, sample } from '../../../test/fixtures';
import { RunStream, type EventSourceLike } from './run-stream';

class FakeSource implements EventSourceLike {
  readyState = 1;
  onopen: ((ev: Event) => unknown) | null = null;
  onerror: ((ev: Event) => unknown) | null = null;
  closed = false;
  private listeners = new Map<string, (ev: MessageEvent) => void>();
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void {
    this.listeners.set(type, listener);
  }
  close(): void {
    this.closed = true;
    this.readyState = 2;
  }
  emit(type: string, data: unknown): void {
    this.listeners.get(type)?.(new MessageEvent(type, { data: JSON.stringify(data) }));
  }
}

function open(): { stream: RunStream; source: FakeSource } {
  const source = new FakeSource();
  const stream = new RunStream(7, { createEventSource: () => source, flushMs: 0 });
  stream.start();
  return { stream, source };
}

describe('RunStream end', () => {
  it('takes the run from `end` and says whether every sample came', () => {
    const { stream, source } = open();
    source.emit('sample', sample(0));
    source.emit('end', { ...run({ id: 7, status: 'cancelled' }), samples_complete: false });
    const snap = stream.getSnapshot();
    expect(snap.ended).toBe(true);
    expect(snap.samplesComplete).toBe(false);
    expect(snap.run?.status).toBe('cancelled');
    expect(snap.run && 'samples_complete' in snap.run).toBe(false);
    expect(snap.samples.map((s) => s.seq)).toEqual([0]);
    expect(source.closed).toBe(true);
  });

  it('an `end` that says nothing of it (an older server) counts as complete', () => {
    const { stream, source } = open();
    expect(stream.getSnapshot().samplesComplete).toBeNull();
    source.emit('end', run({ id: 7, status: 'succeeded' }));
    expect(stream.getSnapshot().samplesComplete).toBe(true);
  });
});
