// Suites in words: an item's experiment and what it varies (ops, threads, sizes), a suite's expected duration for
// the hosts picked, a suite run's progress. Every figure comes from the API; nothing here knows an experiment.
import type { Experiment } from '../../../lib/api/types';
import { expectedDuration, isTwoHost } from '../../../lib/experiments';
import { formatBytes, formatDuration, formatPercent } from '../../../lib/format';

type Params = Record<string, unknown>;
export interface ItemLike {
  experiment: string;
  params: Params;
  needs?: string | null;
}

const list = (v: unknown): unknown[] | undefined => (v === undefined || v === null ? undefined : Array.isArray(v) ? v : [v]);
const bytes = (v: unknown) => (typeof v === 'number' ? formatBytes(v) : String(v));
const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/** "≈ 1 min 36 s": an expected duration as the job form shows it, approximate. */
export function formatEstimate(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  return `≈ ${formatDuration(seconds)}`;
}

/** What an item varies, in words: "ops fp64, int32 · 1, 2 threads · sizes 4 KiB, 256 MiB · 5 s each, 1 repeat". */
export function describeParams(params: Params): string {
  const parts: string[] = [];
  const ops = list(params.op) ?? list(params.ops);
  if (ops?.length) parts.push(`${plural(ops.length, 'op', 'ops')} ${ops.join(', ')}`);
  const threads = list(params.threads);
  if (threads?.length) parts.push(`${threads.join(', ')} ${plural(threads.length === 1 ? Number(threads[0]) : 2, 'thread', 'threads')}`);
  const sizes = list(params.sizes);
  if (sizes?.length) parts.push(`${plural(sizes.length, 'size', 'sizes')} ${sizes.map(bytes).join(', ')}`);
  const blocks = list(params.blocks);
  if (blocks?.length) parts.push(`${plural(blocks.length, 'block', 'blocks')} ${blocks.map(bytes).join(', ')}`);
  if (typeof params.file_size === 'number') parts.push(`file ${formatBytes(params.file_size)}`);
  const timing: string[] = [];
  if (typeof params.duration_s === 'number') timing.push(`${formatDuration(params.duration_s)} each`);
  if (typeof params.repeats === 'number') timing.push(`${params.repeats} ${plural(params.repeats, 'repeat', 'repeats')}`);
  if (timing.length) parts.push(timing.join(', '));
  if (params.reference === true) parts.push('reference tools on');
  return parts.join(' · ');
}

/** One item in words: "CPU: ops fp64, int32 · 1, 2 threads · …", with what it needs of the hosts. */
export function describeItem(item: ItemLike, experiments: readonly Pick<Experiment, 'kind' | 'title' | 'roles'>[] = []): string {
  const e = experiments.find((x) => x.kind === item.experiment);
  const title = e?.title ?? item.experiment;
  const what = describeParams(item.params);
  const needs = [isTwoHost(e) ? 'two hosts' : '', item.needs === 'gpu' ? 'a host with a GPU' : ''].filter(Boolean);
  return `${title}${what ? `: ${what}` : ''}${needs.length ? ` (needs ${needs.join(' and ')})` : ''}`;
}

export interface PickedHost {
  id: number;
  hasGpu: boolean;
}

export interface SuiteEstimate {
  /** Expected seconds for the hosts picked (the server's sum of its jobs' expected durations), or undefined when a
   * term is unknown. */
  seconds: number | undefined;
  /** Items that run only with two hosts picked. */
  twoHostItems: number;
  /** Items that run only on a host with a GPU. */
  gpuItems: number;
}

/** A suite's expected duration for the hosts picked: its one-host figure (one-host items run on every host at
 * once), plus its two-host items once two hosts are picked (with a peer: once per host picked), plus its GPU items
 * where a picked host has a GPU. */
export function suiteEstimate(
  suite: { items: readonly ItemLike[]; expected_duration_one_host_s: number },
  experiments: readonly (Pick<Experiment, 'kind' | 'roles'> & Parameters<typeof expectedDuration>[0])[],
  hosts: readonly PickedHost[],
  /** A peer named: it serves every two-host item, each host picked driving to it in turn. */
  peer = false,
): SuiteEstimate {
  let seconds: number | undefined = suite.expected_duration_one_host_s;
  let twoHostItems = 0;
  let gpuItems = 0;
  for (const item of suite.items) {
    const e = experiments.find((x) => x.kind === item.experiment);
    const pair = isTwoHost(e);
    if (pair) twoHostItems += 1;
    if (item.needs === 'gpu') gpuItems += 1;
    const runs = pair ? hosts.length >= 2 || (peer && hosts.length > 0) : item.needs === 'gpu' ? hosts.some((h) => h.hasGpu) : false;
    if (!runs) continue; // counted in the one-host figure, or left out on these hosts
    const d = e ? expectedDuration(e, item.params) : undefined;
    const times = pair && peer ? hosts.length : 1; // one job per host picked, one after another on the peer
    seconds = d && seconds !== undefined ? seconds + times * d.upTo : undefined;
  }
  return { seconds, twoHostItems, gpuItems };
}

/** "12 of 19 runs done (63.2 %)". */
export function runsDoneText(done: number, total: number, progress: number): string {
  return `${done} of ${total} ${plural(total, 'run', 'runs')} done (${formatPercent(progress)})`;
}

/** Seconds since `iso`, never negative. */
export function elapsedSince(iso: string, now = Date.now()): number | undefined {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : Math.max(0, (now - t) / 1000);
}
