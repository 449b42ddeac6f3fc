// What an experiment is, as GET /api/experiments publishes it (ExperimentPublic, from the backend's one table,
// common/hostbench_common/experiments.py): which parameters apply, how the expected duration follows from the
// parameters (its `duration` terms), how many hosts it takes and in which roles. Nothing here names an
// experiment or holds a copy of its figures: every term comes from the experiment object.
import type { Experiment } from './api/types';

type Params = Record<string, unknown>;

/** The parts of an experiment that the rules below read (an ExperimentPublic has them all). */
export type ExperimentTerms = Pick<Experiment, 'parameters' | 'applies' | 'duration'>;
export type ExperimentRoles = Pick<Experiment, 'kind' | 'roles' | 'run_kinds'>;

function properties(e: Pick<Experiment, 'parameters'>): Record<string, Record<string, unknown>> {
  const props = (e.parameters as { properties?: unknown }).properties;
  return typeof props === 'object' && props !== null ? (props as Record<string, Record<string, unknown>>) : {};
}

/** Each parameter's published default (the JSON Schema `default` of its property), where it has one. */
export function parameterDefaults(e: Pick<Experiment, 'parameters'>): Params {
  const out: Params = {};
  for (const [name, schema] of Object.entries(properties(e))) if (schema.default !== undefined) out[name] = schema.default;
  return out;
}

/** Absent as the server reads it: not given (form text left empty counts as not given). */
const absent = (v: unknown) => v === undefined || v === null || v === '';

/** A value as given, else the published default. */
function valueOf(name: string, values: Params, defaults: Params): unknown {
  return absent(values[name]) ? defaults[name] : values[name];
}

/** Form text ("latency", "1") matches its typed value (latency, 1); lists and objects do not occur in `applies`. */
const same = (a: unknown, b: unknown) => a === b || (b !== undefined && b !== null && String(a) === String(b));

/** Whether parameter `name` applies while the others have these values (parameters or raw form values): an
 * experiment's `applies` says {name: {other: [values]}}; the runner leaves a parameter that does not apply out
 * of the kernel's argv, so the form does not ask for it. */
export function fieldApplies(e: Pick<Experiment, 'parameters' | 'applies'>, name: string, values: Params): boolean {
  const rule = e.applies[name];
  if (!rule) return true;
  const defaults = parameterDefaults(e);
  return Object.entries(rule).every(([other, allowed]) => allowed.some((a) => same(a, valueOf(other, values, defaults))));
}

/** Whether parameter `name` applies to any run a job of these raw form values makes: with a list for the fan-out
 * parameter (op "copy, latency": one run per op), when it applies to one of them (the latency run has working-set
 * sizes); the server refuses a parameter no run would use. */
export function fieldAppliesToAny(e: Pick<Experiment, 'parameters' | 'applies' | 'duration'>, name: string, values: Params): boolean {
  const fanOut = e.duration.fan_out;
  const v = fanOut ? values[fanOut] : undefined;
  const picked = typeof v === 'string' ? v.split(/[\s,;]+/).filter(Boolean) : Array.isArray(v) ? v : [];
  if (!fanOut || picked.length === 0) return fieldApplies(e, name, values);
  return picked.some((one) => fieldApplies(e, name, { ...values, [fanOut]: one }));
}

export interface ExpectedDuration {
  /** Seconds of measuring at `repeats`. */
  measuring: number;
  /** Seconds of measuring at most: at `max_repeats` when repeating until stable (stable_cv > 0), else `measuring`. */
  measuringUpTo: number;
  /** The reference tools' allowance (0 unless reference is on). */
  reference: number;
  /** The server's expected_duration_s: `measuringUpTo` + `reference`. */
  upTo: number;
}

function finite(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** The expected duration of a job of this experiment with these parameters on one host: one run per item when
 * the job gives a list for the `fan_out` parameter (op: ["fp64", "fp32"]), the sum of theirs (`runDuration`). */
export function expectedDuration(e: ExperimentTerms, params: Params): ExpectedDuration | undefined {
  const name = e.duration.fan_out;
  const list = name ? params[name] : undefined;
  if (!name || !Array.isArray(list)) return runDuration(e, params);
  const total: ExpectedDuration = { measuring: 0, measuringUpTo: 0, reference: 0, upTo: 0 };
  for (const item of list) {
    const one = runDuration(e, { ...params, [name]: item });
    if (!one) return undefined;
    total.measuring += one.measuring;
    total.measuringUpTo += one.measuringUpTo;
    total.reference += one.reference;
    total.upTo += one.upTo;
  }
  return total;
}

/** The expected duration of one run of this experiment with these parameters, from the experiment's published
 * `duration` terms, as the server computes its expected_duration_s (Experiment.expected_duration plus
 * reference_allowance): configurations = the product of the lengths of the `per_item` lists that apply;
 * seconds = configurations × (warmup_s + repeats × duration_s), `fixed` values in place of the parameters;
 * up to: repeats at max_repeats when stable_cv > 0, each phase plus quiet_wait_s + disturbed_retries × duration_s; plus reference_allowance_s per item of the `reference_per` list
 * (once when it is not a list) when reference is on. Parameters not given take their published defaults.
 * Undefined when a list it counts has no value here (neither given nor published). */
function runDuration(e: ExperimentTerms, params: Params): ExpectedDuration | undefined {
  const terms = e.duration;
  const defaults = parameterDefaults(e);
  const props = properties(e);
  const values: Params = { ...defaults };
  for (const [k, v] of Object.entries(params)) if (!absent(v)) values[k] = v;
  const withFixed: Params = { ...values, ...terms.fixed };

  let configs = 1;
  for (const name of terms.per_item) {
    if (!fieldApplies(e, name, withFixed)) continue;
    const v = withFixed[name];
    if (Array.isArray(v)) configs *= v.length;
    else if (v === undefined && name in props) return undefined; // the server has a value; we do not know it
  }
  const repeats = finite(withFixed.repeats, 1);
  const duration = finite(withFixed.duration_s, 0);
  // busy hosts: every measured phase may wait quiet_wait_s and be measured disturbed_retries more times (a cap)
  const busy = finite(withFixed.quiet_wait_s, 0) + finite(withFixed.disturbed_retries, 0) * duration;
  const phase = (n: number, extra: number) => configs * (finite(withFixed.warmup_s, 0) + n * (duration + extra));
  const measuring = phase(repeats, 0);
  const measuringUpTo = phase(finite(withFixed.stable_cv, 0) > 0 ? Math.max(repeats, finite(withFixed.max_repeats, repeats)) : repeats, busy);

  let reference = 0;
  if (values.reference === true) {
    const per = terms.reference_per ? values[terms.reference_per] : undefined;
    if (terms.reference_per && per === undefined && terms.reference_per in props) return undefined;
    reference = terms.reference_allowance_s * (Array.isArray(per) && per.length ? per.length : 1);
  }
  return { measuring, measuringUpTo, reference, upTo: measuringUpTo + reference };
}

/** Whether an experiment runs between two hosts (roles ["serve", "drive"]): host_ids[0] serves, [1] drives. */
export function isTwoHost(e: Pick<Experiment, 'roles'> | undefined): boolean {
  return e?.roles.length === 2;
}

/** A run's role within its job ("host", "serve", "drive"), from the experiment whose `run_kinds` name the run's
 * experiment; undefined while the experiments are unknown or none names it. */
export function roleOfRun(experiments: readonly ExperimentRoles[] | undefined, runExperiment: string): string | undefined {
  for (const e of experiments ?? []) {
    const i = e.run_kinds.indexOf(runExperiment);
    if (i >= 0) return e.roles[i];
  }
  return undefined;
}
