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

interface EndedRun {
  status: string;
  verdict?: string | null;
  started_at?: string | null;
  finished_at?: string | null;
}

/** How long a run took (end − start), or null while it has not both. */
export function runTook(r: EndedRun): number | null {
  if (!r.started_at || !r.finished_at) return null;
  const s = (Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000;
  return Number.isFinite(s) && s >= 0 ? s : null;
}

/** A finished suite run in one sentence: "12 of 14 runs succeeded (2 failed); verdicts: 9 valid, 3 oversubscribed;
 * took 4 min 10 s, ended …". The last end, else null when no run ended. */
export function suiteSummary(createdAt: string, runs: readonly EndedRun[]): { text: string; lastEnd: string | null } {
  const count = (xs: (string | null | undefined)[]) => {
    const m = new Map<string, number>();
    for (const x of xs) if (x) m.set(x, (m.get(x) ?? 0) + 1);
    return [...m.entries()].sort((a, b) => b[1] - a[1]);
  };
  const ok = runs.filter((r) => r.status === 'succeeded').length;
  const other = count(runs.filter((r) => r.status !== 'succeeded').map((r) => r.status));
  const verdicts = count(runs.map((r) => r.verdict));
  const ends = runs.map((r) => r.finished_at).filter((x): x is string => !!x).sort();
  const lastEnd = ends.at(-1) ?? null;
  const took = lastEnd ? (Date.parse(lastEnd) - Date.parse(createdAt)) / 1000 : null;
  const parts = [
    `${ok} of ${runs.length} ${plural(runs.length, 'run', 'runs')} succeeded${other.length ? ` (${other.map(([s, n]) => `${n} ${s}`).join(', ')})` : ''}`,
  ];
  if (verdicts.length) parts.push(`verdicts: ${verdicts.map(([v, n]) => `${n} ${v.replace('_', ' ')}`).join(', ')}`);
  if (took !== null && Number.isFinite(took) && took >= 0) parts.push(`took ${formatDuration(took)}`);
  return { text: parts.join('; '), lastEnd };
}
