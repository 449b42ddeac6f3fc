// What a result row's `threads` and `block_bytes` are, in a person's words: threads or a network kernel's streams,
// block size or a TCP message's, a UDP datagram's, the memory latency's working set. Declared once on the server
// (hostbench_common/axes.py) and published with each experiment (GET /api/experiments: axes, axes_by_op); the
// run's experiment is its run kind, which an experiment's run_kinds name.
import type { Experiment } from './api/types';

export type Axes = Experiment['axes'];
/** The words of one run's rows, by op. */
export type AxesOf = (op: string | null | undefined) => Axes;

/** Until the experiments have loaded (or for a run kind none names): the words that make no claim beyond the
 * row's field names. */
export const FIELD_AXES: Axes = { count: 'thread', counts: 'threads', size: 'block size', sized: 'blocks' };

/** The words of a run kind's rows ('network_drive' → streams, message size; udp ops → datagram size). */
export function axesOf(experiments: readonly Pick<Experiment, 'run_kinds' | 'axes' | 'axes_by_op'>[] | undefined, runKind: string): AxesOf {
  const e = experiments?.find((x) => x.run_kinds.includes(runKind));
  return (op) => (e ? ((op ? e.axes_by_op?.[op] : undefined) ?? e.axes) : FIELD_AXES);
}

/** 1 → "1 stream", 4 → "4 threads". */
export function countWords(a: Axes, n: number): string {
  return `${n} ${n === 1 ? a.count : a.counts}`;
}

/** "Streams", "Message size": an axis title or a table header. */
export function axisTitle(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
