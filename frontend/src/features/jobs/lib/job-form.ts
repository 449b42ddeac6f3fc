// The new-job form's rules, apart from React: which hosts and experiment it starts with, what is wrong
// with the hosts picked, which field errors to show, and the duration estimate.
import { durationEstimators, expectedDuration } from '../../../config/experiments';
import type { MappedErrors } from './server-errors';

/** Prefix of every element id in the form (fields, host boxes, messages). */
export const FORM_ID = 'new-job';
/** The experiment whose host_ids are [serving host, driving host]. */
export const PAIR = 'network_pair';

export interface HostOption {
  id: number;
  name: string;
  online: boolean;
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

export function hostProblem(kind: string, hostIds: number[]): string | null {
  if (kind === PAIR) {
    if (hostIds.length === 2) return null;
    return `Pick exactly two hosts (${hostIds.length} picked): the first you pick serves, the second drives`;
  }
  return hostIds.length === 0 ? 'Pick at least one host' : null;
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

export interface DurationEstimate {
  /** Seconds of measuring at `repeats`; undefined when unknown or the parameters are invalid. */
  estimate?: number;
  /** Seconds at `max_repeats` when the job repeats until stable. */
  upTo?: number;
  expected?: ReturnType<typeof expectedDuration>;
}

export function durationEstimate(kind: string, params: Record<string, unknown>, valid: boolean): DurationEstimate {
  const estimator = durationEstimators[kind];
  const estimate = valid ? estimator?.(params) : undefined;
  const expected = estimate !== undefined ? expectedDuration(kind, params) : undefined;
  // Repeat until stable: as few as `repeats`, as many as `max_repeats`.
  const upTo =
    estimate !== undefined && Number(params.stable_cv) > 0 && Number(params.max_repeats) > Number(params.repeats)
      ? estimator?.({ ...params, repeats: params.max_repeats })
      : undefined;
  return { estimate, upTo, expected };
}
