// The one live-data hook for a run: samples (bounded, deduped, seq-ordered), the latest RunPublic
// pushed by the server, and the connection state. See lib/run-stream.ts for the protocol.
import { useEffect, useState, useSyncExternalStore } from 'react';
import { RunStream, type RunStreamOptions, type RunStreamSnapshot } from '../lib/run-stream';

const IDLE: RunStreamSnapshot = {
  samples: [], run: null, connection: 'closed', ended: false, lastSeq: -1, t0: null, received: 0,
};
const noopSubscribe = () => () => {};

export function useRunSamples(runId: number | null, options?: RunStreamOptions): RunStreamSnapshot {
  const [stream, setStream] = useState<RunStream | null>(null);

  useEffect(() => {
    if (runId === null || !Number.isFinite(runId)) return;
    const s = new RunStream(runId, options);
    setStream(s);
    s.start();
    return () => {
      s.stop();
      setStream(null);
    };
    // options are read once per run id on purpose: a new object each render must not reconnect.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [runId]);

  return useSyncExternalStore(
    stream ? stream.subscribe : noopSubscribe,
    stream ? stream.getSnapshot : () => IDLE,
    () => IDLE,
  );
}

export type { RunStreamSnapshot, ConnectionState } from '../lib/run-stream';
