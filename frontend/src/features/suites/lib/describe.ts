// Suites in words: an item's experiment and what it varies (ops, threads, sizes), a suite's expected duration for
// the hosts picked, a suite run's progress. Every figure comes from the API; nothing here knows an experiment.
import type { Experiment } from '../../../lib/api/types';
import { isTwoHost } from '../../../lib/experiments';
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

/** What a suite's items need of the hosts picked, for the words beside the server's estimate (its figure is the
 * server's, POST /api/suite-runs/estimate: one model, no allowance where no tool applies). */
export interface SuiteItems {
  /** Items that run only with two hosts picked. */
  twoHostItems: number;
  /** Items that run only on a host with a GPU. */
  gpuItems: number;
}

export function suiteItems(
  suite: { items: readonly ItemLike[] },
  experiments: readonly Pick<Experiment, 'kind' | 'roles'>[],
): SuiteItems {
  let twoHostItems = 0;
  let gpuItems = 0;
  for (const item of suite.items) {
    if (isTwoHost(experiments.find((x) => x.kind === item.experiment))) twoHostItems += 1;
    if (item.needs === 'gpu') gpuItems += 1;
  }
  return { twoHostItems, gpuItems };
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
