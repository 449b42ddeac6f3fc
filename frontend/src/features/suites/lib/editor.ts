// The suite editor's rules, apart from React: a draft suite (title, description, items as raw form values), each
// item's generated fields (the New job form's, from GET /api/experiments), the job body an item becomes, its
// expected duration and the suite's total, the server's 422 put next to the item it names, and an import file
// read in words. Nothing here names an experiment: fields, defaults, `applies` and duration terms come from the API.
import { ApiError, errorMessage } from '../../../lib/api/errors';
import type { Experiment } from '../../../lib/api/types';
import { expectedDuration, fieldAppliesToAny, isTwoHost, parameterDefaults } from '../../../lib/experiments';
import { fieldsFromSchema, initialValues, validateParams, type FieldSpec, type RawValue, type RawValues } from '../../../lib/param-schema';

type Params = Record<string, unknown>;
export type ItemExperiment = Pick<Experiment, 'kind' | 'title' | 'parameters' | 'applies' | 'duration' | 'roles'>;

export interface DraftItem {
  /** Stable React key: items move and go. */
  key: number;
  experiment: string;
  raw: RawValues;
  needs: 'gpu' | null;
  /** The parameters the item had when it was loaded: sent again even where they equal the published default. */
  loaded: Params;
}

export interface Draft {
  title: string;
  description: string;
  items: DraftItem[];
}

/** What the API saves: POST /api/suites and PUT /api/suites/{id}. */
export interface SuiteBody {
  title: string;
  description: string;
  items: { experiment: string; params: Params; needs: 'gpu' | null }[];
}

let nextKey = 1;
const newKey = () => nextKey++;

/** An item's fields: the experiment's generated ones, as the New job form's (its fan-out parameter, op: one run per
 * item, offered as checkboxes, since a suite item, like a job, may measure several ops). */
export function itemFields(e: ItemExperiment): FieldSpec[] {
  return fieldsFromSchema(e.parameters, e.kind);
}

/** Whether a field applies to the item: with a fan-out list, when it applies to any of the runs it makes (the
 * latency run of op [copy, latency] has working-set sizes). */
export function itemFieldApplies(e: ItemExperiment, name: string, raw: RawValues): boolean {
  return fieldAppliesToAny(e, name, raw);
}

/** Raw form values showing these parameters (the published defaults for the rest). */
export function rawFromParams(fields: FieldSpec[], params: Params): RawValues {
  return initialValues(fields.map((f) => (params[f.name] !== undefined ? { ...f, default: params[f.name] } : f)));
}

/** A new item of this experiment: its published defaults. */
export function newItem(e: ItemExperiment): DraftItem {
  return { key: newKey(), experiment: e.kind, raw: initialValues(itemFields(e)), needs: null, loaded: {} };
}

/** A draft from a saved or built-in suite (edit, or save as new); experiments the API no longer has keep their
 * raw parameters out of the form and are reported by itemState. */
export function draftFromSuite(
  suite: { title: string; description: string; items: readonly { experiment: string; params: Params; needs?: string | null }[] },
  experiments: readonly ItemExperiment[],
  titleSuffix = '',
): Draft {
  return {
    title: `${suite.title}${titleSuffix}`,
    description: suite.description,
    items: suite.items.map((item) => {
      const e = experiments.find((x) => x.kind === item.experiment);
      return {
        key: newKey(),
        experiment: item.experiment,
        raw: e ? rawFromParams(itemFields(e), item.params) : {},
        needs: item.needs === 'gpu' ? 'gpu' : null,
        loaded: item.params,
      };
    }),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Picked checkboxes read back in the options' order; the ops of a loaded item keep the order they run in, and
 * the ones picked since come after. */
function inLoadedOrder(v: unknown, was: unknown): unknown {
  if (!Array.isArray(v) || !Array.isArray(was)) return v;
  return [...was.filter((x) => v.includes(x)), ...v.filter((x) => !was.includes(x))];
}

export interface ItemState {
  fields: FieldSpec[];
  /** Client-side errors by field name (the schema's bounds). */
  errors: Record<string, string>;
  /** An error about the item as a whole (an experiment the API does not have). */
  problem: string | null;
  /** The params to send: those the person changed from the published defaults, and those the item was loaded
   * with; the server applies its own defaults to the rest, as for the New job form. */
  params: Params;
  /** The server's expected seconds for this item's job on one host; undefined while invalid or unknown. */
  seconds: number | undefined;
  twoHost: boolean;
}

export function itemState(item: DraftItem, experiments: readonly ItemExperiment[]): ItemState {
  const e = experiments.find((x) => x.kind === item.experiment);
  if (!e) return { fields: [], errors: {}, problem: `The API has no experiment "${item.experiment}"`, params: {}, seconds: undefined, twoHost: false };
  const fields = itemFields(e).filter((f) => itemFieldApplies(e, f.name, item.raw));
  const { params: parsed, errors } = validateParams(fields, item.raw);
  const defaults = parameterDefaults(e);
  const params: Params = {};
  for (const f of fields) {
    if (!(f.name in parsed)) continue;
    let v = f.kind === 'enum-list' ? inLoadedOrder(parsed[f.name], item.loaded[f.name]) : parsed[f.name];
    // One op picked is sent as one op, as a job body has it.
    if (f.name === e.duration.fan_out && Array.isArray(v) && v.length === 1) v = v[0];
    if (f.name in item.loaded || !same(v, defaults[f.name]) || (f.required && f.default === undefined)) params[f.name] = v;
  }
  const valid = Object.keys(errors).length === 0;
  const seconds = valid ? expectedDuration(e, params)?.upTo : undefined;
  return { fields, errors, problem: null, params, seconds, twoHost: isTwoHost(e) };
}

/** The item after a person changed one of its values. */
export function withValue(item: DraftItem, name: string, value: RawValue): DraftItem {
  return { ...item, raw: { ...item.raw, [name]: value } };
}

/** The body to save, or the first problem in words (the editor shows each in place). */
export function suiteBody(draft: Draft, experiments: readonly ItemExperiment[]): { body: SuiteBody } | { error: string } {
  if (!draft.title.trim()) return { error: 'Give the suite a title' };
  if (draft.items.length === 0) return { error: 'Add at least one item' };
  const items: SuiteBody['items'] = [];
  for (const [i, item] of draft.items.entries()) {
    const s = itemState(item, experiments);
    if (s.problem || Object.keys(s.errors).length) return { error: `Item ${i + 1} has errors: ${s.problem ?? Object.entries(s.errors).map(([k, v]) => `${k}: ${v}`).join('; ')}` };
    items.push({ experiment: item.experiment, params: s.params, needs: item.needs });
  }
  return { body: { title: draft.title.trim(), description: draft.description.trim(), items } };
}

export interface SuiteTotal {
  /** Seconds on one host, as the API's expected_duration_one_host_s counts (two-host and GPU items left out);
   * undefined while an item's figure is unknown. */
  oneHost: number | undefined;
  /** Items the one-host figure leaves out: they run only with two hosts, or on a host with a GPU. */
  leftOut: number;
}

export function suiteTotal(states: readonly ItemState[], items: readonly Pick<DraftItem, 'needs'>[]): SuiteTotal {
  let oneHost: number | undefined = 0;
  let leftOut = 0;
  states.forEach((s, i) => {
    if (s.twoHost || items[i]?.needs === 'gpu') leftOut += 1;
    else oneHost = oneHost === undefined || s.seconds === undefined ? undefined : oneHost + s.seconds;
  });
  return { oneHost, leftOut };
}

export interface SuiteErrors {
  /** By item index: errors by field name, and the rest in words. */
  items: Record<number, { fields: Record<string, string>; messages: string[] }>;
  title: string | null;
  description: string | null;
  form: string[];
}

const noErrors = (): SuiteErrors => ({ items: {}, title: null, description: null, form: [] });

function addTo(out: SuiteErrors, i: number, field: string | null, msg: string) {
  const it = (out.items[i] ??= { fields: {}, messages: [] });
  if (field) it.fields[field] = it.fields[field] ? `${it.fields[field]}; ${msg}` : msg;
  else it.messages.push(msg);
}

/** The server's refusal, each part next to what it names. A 422 comes in two shapes: request validation
 * (`detail` a list, loc ["body", "items", 1, "params", "threads", 0]), or the check of each item as a job body
 * (`detail` a text: "items[1] (cpu): params.threads.0: Input should be …", "items[0] (disk) would take …"). */
export function mapSuiteErrors(err: unknown): SuiteErrors {
  const out = noErrors();
  if (!(err instanceof ApiError) || err.status !== 422) {
    out.form.push(errorMessage(err));
    return out;
  }
  if (err.issues.length) {
    for (const issue of err.issues) {
      const loc = issue.loc[0] === 'body' ? issue.loc.slice(1) : issue.loc;
      if (loc[0] === 'items' && typeof loc[1] === 'number') {
        const rest = loc.slice(2);
        addTo(out, loc[1], rest[0] === 'params' && typeof rest[1] === 'string' ? rest[1] : null, rest.length && rest[0] !== 'params' ? `${rest.join('.')}: ${issue.msg}` : issue.msg);
      } else if (loc[0] === 'title' || loc[0] === 'description') out[loc[0]] = issue.msg;
      else out.form.push(loc.length ? `${loc.join('.')}: ${issue.msg}` : issue.msg);
    }
    return out;
  }
  const m = /^items\[(\d+)\](?:\s*\([^)]*\))?[.:]?\s*(.*)$/s.exec(err.detail);
  if (!m) {
    out.form.push(err.detail || err.message);
    return out;
  }
  const i = Number(m[1]);
  const rest = m[2] ?? '';
  const p = /^params\.([a-z0-9_]+)(?:\.\d+)*:\s*(.*)$/s.exec(rest);
  if (p) addTo(out, i, p[1] as string, p[2] as string);
  else addTo(out, i, null, rest.replace(/^would take/, 'It would take'));
  return out;
}

/** The refusal in one paragraph (an import has no form to put it in): "Item 2: threads: Input should be …". */
export function refusalText(e: SuiteErrors): string {
  const parts = [...e.form];
  if (e.title) parts.push(`title: ${e.title}`);
  if (e.description) parts.push(`description: ${e.description}`);
  for (const [i, it] of Object.entries(e.items)) {
    const what = [...Object.entries(it.fields).map(([k, v]) => `${k}: ${v}`), ...it.messages];
    parts.push(`item ${Number(i) + 1}: ${what.join('; ')}`);
  }
  return parts.join('; ');
}

/** An import file's content as the body to POST, or why it is not one; the server checks the rest. */
export function parseImport(text: string): { body: Params } | { error: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return { error: `The file is not JSON (${errorMessage(e)}).` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { error: 'The file holds no suite: expected one JSON object with a title and items, as Export writes it.' };
  }
  return { body: data as Params };
}

/** "hostbench-suite-saved-3.json". */
export const exportFileName = (id: string) => `hostbench-suite-${id}.json`;
