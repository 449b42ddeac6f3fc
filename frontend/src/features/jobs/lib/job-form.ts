// The new-job form's rules, apart from React: which hosts and experiment it starts with, what is wrong
// with the hosts picked, which parameters to send, which field errors to show, and the duration estimate.
import type { Experiment } from '../../../lib/api/types';
import { expectedDuration, isTwoHost, type ExpectedDuration, type ExperimentTerms } from '../../../lib/experiments';
import type { FieldSpec, RawValues } from '../../../lib/param-schema';
import type { MappedErrors } from './server-errors';

/** Prefix of every element id in the form (fields, host boxes, messages). */
export const FORM_ID = 'new-job';

export interface HostOption {
  id: number;
  name: string;
  online: boolean;
  /** Logical CPUs from the host's inventory, where it says. */
  cpus?: number | null;
  /** GPUs its inventory lists (0: none); null or absent when it does not say. */
  gpus?: number | null;
  /** Its labels (instance labels and those its enrolment token gave it): the picker filters by them. */
  labels?: Record<string, string>;
  hostname?: string;
}

/** The most threads the parameters ask for (`threads`: a number or a list), or null when they name none. */
export function maxThreads(params: Record<string, unknown>): number | null {
  const t = params.threads;
  const all = (Array.isArray(t) ? t : [t]).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return all.length ? Math.max(...all) : null;
}

/** When the job asks for more threads than a picked host has CPUs: the words of the warning, else null. The run
 * still happens (the course reports ask for 8 threads on small machines); its figures come back flagged
 * oversubscribed, and this says so before it starts. */
export function oversubscription(hosts: HostOption[], hostIds: number[], params: Record<string, unknown>): string | null {
  const t = params.threads;
  const counts = [...new Set((Array.isArray(t) ? t : [t]).filter((x): x is number => typeof x === 'number' && Number.isFinite(x)))].sort((a, b) => a - b);
  if (!counts.length) return null;
  const and = (xs: number[]) => (xs.length > 1 ? `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}` : String(xs[0]));
  const where = hostIds
    .map((id) => hosts.find((h) => h.id === id))
    .filter((h): h is HostOption => !!h && typeof h.cpus === 'number' && h.cpus > 0)
    .map((h) => ({ h, over: counts.filter((n) => n > (h.cpus as number)) }))
    .filter(({ over }) => over.length)
    .map(({ h, over }) => `${and(over)} thread${over.length === 1 && over[0] === 1 ? '' : 's'} on ${h.name} (${h.cpus} CPU${h.cpus === 1 ? '' : 's'})`);
  if (!where.length) return null;
  return `More threads than CPUs: ${where.join('; ')}. The runs still happen, each thread gets at most a share of a CPU, and those figures will be marked oversubscribed.`;
}

/** The hosts asked for that exist; else the only host when there is one. */
export function startingHostIds(hosts: HostOption[], wanted: number[] | undefined): number[] {
  const known = (wanted ?? []).filter((id) => hosts.some((h) => h.id === id));
  if (known.length) return known;
  return hosts.length === 1 ? [(hosts[0] as HostOption).id] : [];
}

/** The experiment asked for when it exists, else the first. */
export function startingKind(experiments: { kind: string }[], wanted: string | undefined): string {
  return experiments.find((e) => e.kind === wanted)?.kind ?? experiments[0]?.kind ?? '';
}

/** What is wrong with the hosts picked: a two-host experiment (roles serve, drive) takes exactly two, in that
 * order; any other one host or more. */
export function hostProblem(experiment: Pick<Experiment, 'roles'> | undefined, hostIds: number[]): string | null {
  if (isTwoHost(experiment)) {
    if (hostIds.length === 2) return null;
    return `Pick exactly two hosts (${hostIds.length} picked): the first you pick serves, the second drives`;
  }
  return hostIds.length === 0 ? 'Pick at least one host' : null;
}

/** The hosts picked that a GPU experiment cannot run on (their inventory lists no GPU), in words, else null: the
 * server refuses the job there (422 on host_ids); a host whose inventory does not say is left to the server. */
export function missingGpu(experiment: Pick<Experiment, 'needs_gpu'> | undefined, hosts: HostOption[], hostIds: number[]): string | null {
  if (!experiment?.needs_gpu) return null;
  const without = hostIds.map((id) => hosts.find((h) => h.id === id)).filter((h): h is HostOption => !!h && h.gpus === 0).map((h) => h.name);
  if (!without.length) return null;
  const one = without.length === 1;
  const names = one ? without[0] : `${without.slice(0, -1).join(', ')} and ${without.at(-1)}`;
  return `${names} ${one ? 'has' : 'have'} no GPU (${one ? 'its inventory lists' : 'their inventories list'} none): a GPU job cannot run there; pick a host with one`;
}

/** Client errors of the fields touched (all once submitted), then the server's for the rest. */
export function shownFieldErrors(
  client: Record<string, string>,
  server: Record<string, string>,
  submitted: boolean,
  touched: ReadonlySet<string>,
): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, msg] of Object.entries(client)) if (submitted || touched.has(name)) shown[name] = msg;
  for (const [name, msg] of Object.entries(server)) shown[name] ??= msg;
  return shown;
}

/** The server's errors once the person changed `name`: that field's goes, and every form-level one. */
export function withoutServerError(s: MappedErrors, name: string): MappedErrors {
  if (!(name in s.fields) && s.form.length === 0) return s;
  const { [name]: _dropped, ...rest } = s.fields;
  return { fields: rest, form: [] };
}

/** The parameters to send: only those the person changed from what the form first showed (the published
 * defaults), so that the server applies its own defaults to the rest (e.g. it brings the default message size
 * within UDP's limit only when sizes is not given). A required field without a default is always sent. */
export function paramsToSend(fields: FieldSpec[], params: Record<string, unknown>, raw: RawValues, initial: RawValues): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!(f.name in params)) continue;
    if (raw[f.name] !== initial[f.name] || (f.required && f.default === undefined)) out[f.name] = params[f.name];
  }
  return out;
}

export interface DurationEstimate {
  /** Seconds of measuring at `repeats`; undefined when unknown or the parameters are invalid. */
  estimate?: number;
  /** Seconds at most: at `max_repeats` when the job repeats until stable, with every phase's wait for a quiet CPU
   * and its retries when it asks for them. */
  upTo?: number;
  /** The server's expected duration, reference tools included. */
  expected?: ExpectedDuration;
}

/** The estimate for valid parameters, from the experiment's published duration terms. */
export function durationEstimate(experiment: ExperimentTerms | undefined, params: Record<string, unknown>, valid: boolean): DurationEstimate {
  const expected = valid && experiment ? expectedDuration(experiment, params) : undefined;
  if (!expected) return { estimate: undefined, upTo: undefined, expected: undefined };
  // Repeat until stable (as many as `max_repeats`) and busy hosts (a wait and retries per phase): a cap.
  const upTo = expected.measuringUpTo > expected.measuring ? expected.measuringUpTo : undefined;
  return { estimate: expected.measuring, upTo, expected };
}
