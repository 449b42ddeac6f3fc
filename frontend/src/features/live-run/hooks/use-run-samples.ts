// The one live-data hook for a run: samples (bounded, deduped, seq-ordered), the latest RunPublic
// pushed by the server, and the connection state. See lib/run-stream.ts for the protocol.
import { useEffect, useMemo, useSyncExternalStore } from 'react';
import { RunStream, type RunStreamOptions, type RunStreamSnapshot } from '../lib/run-stream';

const IDLE: RunStreamSnapshot = {
  samples: [], run: null, connection: 'closed', ended: false, samplesComplete: null, lastSeq: -1, t0: null,
  received: 0,
};
const noopSubscribe = () => () => {};
const idle = () => IDLE;

export function useRunSamples(runId: number | null, options?: RunStreamOptions): RunStreamSnapshot {
  // Constructing a stream opens nothing; the effect starts and stops it. Options are read once per
  // run id on purpose: a new options object each render must not reconnect.
  const stream = useMemo(
    () => (runId === null || !Number.isFinite(runId) ? null : new RunStream(runId, options)),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [runId],
  );

  useEffect(() => {
    if (!stream) return;
    stream.start();
    return () => stream.stop();
  }, [stream]);

  return useSyncExternalStore(stream ? stream.subscribe : noopSubscribe, stream ? stream.getSnapshot : idle, idle);
}

export type { RunStreamSnapshot, ConnectionState } from '../lib/run-stream';
