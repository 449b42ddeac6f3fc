// Turns an experiment's published JSON Schema (`parameters`, from the kernel's --describe and the
// backend's parameter model) into form field specs, and parses/validates what a person typed
// against the same bounds. The form never hard-codes an experiment's parameters: a field is a size in bytes
// because the kernel's parameter table says so (its "x-unit": "B"), never because of words in its help; its label
// and help come from the dashboard's vocabulary (config/experiments.ts), the kernel's description where that has
// none.
import { enumLabels, fieldHelp, fieldLabels } from '../config/experiments';
import { humanize } from './format';
import { bytesInput, formatBlockSize, parseByteSize } from './units';

export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  definitions?: Record<string, JsonSchema>;
  /** The unit the kernel's parameter table declares (hbk <kernel> --describe): "B" is a size in bytes. */
  'x-unit'?: string;
}

export type FieldKind = 'enum' | 'enum-list' | 'integer' | 'number' | 'integer-list' | 'number-list' | 'boolean' | 'string';

export interface FieldOption {
  value: string | number;
  label: string;
}

export interface FieldSpec {
  name: string;
  kind: FieldKind;
  label: string;
  description: string | null;
  default: unknown;
  /** Bounds on the value (numbers) or on each item (lists). */
  min: number | null;
  max: number | null;
  exclusiveMin: number | null;
  exclusiveMax: number | null;
  /** Each value must be a multiple of this (e.g. 8-byte blocks). */
  multipleOf: number | null;
  /** A size in bytes (the kernel declares its unit "B"): typed as "8 KiB", shown exactly. */
  bytes: boolean;
  /** One value or several (the job's fan-out parameter: one run per value): checkboxes; one picked is sent as it is. */
  oneOrMany: boolean;
  minItems: number | null;
  maxItems: number | null;
  unique: boolean;
  options: FieldOption[];
  required: boolean;
}

/** What the person typed: text for everything except checkboxes. */
export type RawValue = string | boolean;
export type RawValues = Record<string, RawValue>;

function resolveRef(s: JsonSchema, root: JsonSchema): JsonSchema {
  if (!s.$ref) return s;
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(s.$ref);
  const target = m ? (m[1] === '$defs' ? root.$defs : root.definitions)?.[m[2] as string] : undefined;
  const { $ref: _ignored, ...rest } = s;
  return target ? { ...resolveRef(target, root), ...rest } : rest;
}

function typesOf(s: JsonSchema): string[] {
  return Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
}

/** Flatten $ref and anyOf/oneOf (nullable, number|integer unions) into one plain schema. */
export function normalize(s: JsonSchema, root: JsonSchema): JsonSchema {
  const base = resolveRef(s, root);
  const branches = base.anyOf ?? base.oneOf;
  if (!branches) return base;
  const real = branches.map((b) => normalize(b, root)).filter((b) => !typesOf(b).every((t) => t === 'null') || typesOf(b).length === 0);
  const { anyOf: _a, oneOf: _o, ...outer } = base;
  if (real.length === 1) return { ...(real[0] as JsonSchema), ...outer };
  const types = new Set(real.flatMap(typesOf));
  if (types.size > 0 && [...types].every((t) => t === 'number' || t === 'integer')) {
    const merged: JsonSchema = { type: types.has('number') ? 'number' : 'integer' };
    for (const key of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const) {
      const v = real.find((b) => b[key] !== undefined)?.[key];
      if (v !== undefined) merged[key] = v;
    }
    return { ...merged, ...outer };
  }
  return { ...(real[0] ?? {}), ...outer };
}

/** Pydantic titles a field "Duration S" from duration_s; such a title adds nothing. */
function isAutoTitle(title: string, name: string): boolean {
  return title.toLowerCase() === name.replace(/_/g, ' ').toLowerCase();
}

/** The vocabulary's entry for this experiment's parameter ("memory.sizes"), else for the name ("sizes"). */
function said(table: Record<string, string>, experiment: string, name: string): string | undefined {
  return table[`${experiment}.${name}`] ?? table[name];
}

function labelFor(name: string, s: JsonSchema, experiment: string): string {
  const label = said(fieldLabels, experiment, name);
  if (label) return label;
  if (s.title && !isAutoTitle(s.title, name)) return s.title;
  return humanize(name);
}

/** A job's fan-out parameter as the API publishes it: one value, or a list of distinct ones of the same choices
 * (anyOf [enum, array of that enum]). */
function fanOutChoices(s: JsonSchema, root: JsonSchema): JsonSchema | null {
  const branches = resolveRef(s, root).anyOf ?? resolveRef(s, root).oneOf;
  if (!branches || branches.length !== 2) return null;
  const [one, many] = branches.map((b) => normalize(b, root)) as [JsonSchema, JsonSchema];
  const items = normalize(many.items ?? {}, root);
  const same = one.enum && items.enum && one.enum.length === items.enum.length && one.enum.every((v, i) => items.enum?.[i] === v);
  return typesOf(many).includes('array') && same ? many : null;
}

function kindOf(s: JsonSchema, root: JsonSchema): FieldKind {
  if (s.enum) return 'enum';
  const t = typesOf(s);
  if (t.includes('array')) {
    const items = normalize(s.items ?? {}, root);
    if (items.enum) return 'enum-list';
    const it = typesOf(items);
    return it.includes('number') ? 'number-list' : 'integer-list';
  }
  if (t.includes('integer')) return 'integer';
  if (t.includes('number')) return 'number';
  if (t.includes('boolean')) return 'boolean';
  return 'string';
}

/** The form's fields of an experiment's parameter schema; `experiment` (its kind) picks the vocabulary's words
 * where one parameter name means different things (memory's sizes are working sets, network's are messages). */
export function fieldsFromSchema(schema: unknown, experiment = ''): FieldSpec[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const root = schema as JsonSchema;
  const props = root.properties ?? {};
  const required = new Set(root.required ?? []);
  return Object.entries(props).map(([name, raw]) => {
    const many = fanOutChoices(raw, root);
    const { anyOf: _a, oneOf: _o, ...outer } = resolveRef(raw, root);
    const s = many ? { ...many, ...outer, type: 'array' } : normalize(raw, root);
    const kind = kindOf(s, root);
    const bounds = kind.endsWith('-list') ? normalize(s.items ?? {}, root) : s;
    const numeric = kind === 'integer' || kind === 'integer-list';
    return {
      name,
      kind,
      label: labelFor(name, s, experiment),
      description: said(fieldHelp, experiment, name) ?? s.description ?? null,
      default: s.default,
      min: bounds.minimum ?? null,
      max: bounds.maximum ?? null,
      exclusiveMin: bounds.exclusiveMinimum ?? null,
      exclusiveMax: bounds.exclusiveMaximum ?? null,
      multipleOf: bounds.multipleOf ?? null,
      bytes: numeric && s['x-unit'] === 'B',
      oneOrMany: many !== null,
      minItems: s.minItems ?? null,
      maxItems: s.maxItems ?? null,
      unique: s.uniqueItems ?? false,
      options: (s.enum ?? bounds.enum ?? []).map((v) => ({
        value: typeof v === 'number' ? v : String(v),
        label: enumLabels[name]?.[String(v)] ?? String(v),
      })),
      // A field with a default may be left as it is, but not emptied.
      required: required.has(name) || s.default !== undefined,
    };
  });
}

export function initialValues(fields: FieldSpec[]): RawValues {
  const out: RawValues = {};
  for (const f of fields) {
    const d = f.default;
    if (f.kind === 'boolean') out[f.name] = d === true;
    else if (Array.isArray(d)) out[f.name] = d.map((v) => (f.bytes && typeof v === 'number' ? bytesInput(v) : String(v))).join(', ');
    else if (f.bytes && typeof d === 'number' && d > 0) out[f.name] = bytesInput(d);
    else if (d !== undefined && d !== null) out[f.name] = String(d);
    else if (f.kind === 'enum') out[f.name] = String(f.options[0]?.value ?? '');
    else out[f.name] = '';
  }
  return out;
}

const DECIMAL = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/** A size as a bound or an error reads it: exact, in binary units where one divides it (8 KiB, 80 MiB), else in
 * decimal units where one does (10^12 → "1 TB", not "976,562,500 KiB"), else in bytes. */
export function formatSize(bytes: number): string {
  const binary = formatBlockSize(bytes);
  let v = bytes;
  let i = 0;
  while (v >= 1000 && v % 1000 === 0 && i < DECIMAL.length - 1) {
    v /= 1000;
    i += 1;
  }
  const mantissa = (text: string) => Number(text.split(' ')[0]?.replace(/,/g, ''));
  return i > 0 && v < mantissa(binary) ? `${new Intl.NumberFormat('en-US').format(v)} ${DECIMAL[i]}` : binary;
}

/** "1 – 256", "≥ 0", "≤ 600", "8 B – 1 GiB": the bounds as a person reads them. */
export function describeBounds(f: FieldSpec): string | null {
  const show = (v: number | null) => (v === null ? null : f.bytes ? formatSize(v) : v);
  const lo = show(f.min ?? f.exclusiveMin);
  const hi = show(f.max ?? f.exclusiveMax);
  if (lo !== null && hi !== null) return `${lo} – ${hi}`;
  if (lo !== null) return f.exclusiveMin !== null ? `> ${lo}` : `≥ ${lo}`;
  if (hi !== null) return f.exclusiveMax !== null ? `< ${hi}` : `≤ ${hi}`;
  return null;
}

function checkBounds(f: FieldSpec, n: number): string | null {
  const range = describeBounds(f);
  const outside =
    (f.min !== null && n < f.min) ||
    (f.max !== null && n > f.max) ||
    (f.exclusiveMin !== null && n <= f.exclusiveMin) ||
    (f.exclusiveMax !== null && n >= f.exclusiveMax);
  if (outside) return `${f.bytes ? formatSize(n) : n} is out of range: allowed ${range}`;
  if (f.multipleOf !== null && f.multipleOf > 0 && n % f.multipleOf !== 0) {
    return `${f.bytes ? formatSize(n) : n} is not a multiple of ${f.bytes ? formatSize(f.multipleOf) : f.multipleOf}`;
  }
  return null;
}

function parseNumber(f: FieldSpec, text: string, integer: boolean): { value: number } | { error: string } {
  const t = text.trim();
  if (f.bytes) {
    const r = parseByteSize(t);
    if ('error' in r) return r;
    const bad = checkBounds(f, r.value);
    return bad ? { error: bad } : r;
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) {
    return { error: integer ? `"${t}" is not a whole number` : `"${t}" is not a number` };
  }
  const n = Number(t);
  if (integer && !Number.isInteger(n)) return { error: `${t} is not a whole number` };
  const bad = checkBounds(f, n);
  return bad ? { error: bad } : { value: n };
}

export type ParseResult = { ok: true; value: unknown; omit?: boolean } | { ok: false; error: string };

export function parseField(f: FieldSpec, raw: RawValue | undefined): ParseResult {
  if (f.kind === 'boolean') return { ok: true, value: raw === true };
  const text = typeof raw === 'string' ? raw.trim() : '';
  if (text === '') {
    return f.required ? { ok: false, error: 'Required' } : { ok: true, value: undefined, omit: true };
  }
  switch (f.kind) {
    case 'enum': {
      const opt = f.options.find((o) => String(o.value) === text);
      return opt ? { ok: true, value: opt.value } : { ok: false, error: `Choose one of ${f.options.map((o) => o.value).join(', ')}` };
    }
    case 'integer':
    case 'number': {
      const r = parseNumber(f, text, f.kind === 'integer');
      return 'error' in r ? { ok: false, error: r.error } : { ok: true, value: r.value };
    }
    case 'enum-list': {
      const parts = text.split(/[\s,;]+/).filter(Boolean);
      const unknown = parts.find((p) => !f.options.some((o) => String(o.value) === p));
      if (unknown !== undefined) return { ok: false, error: `"${unknown}" is not one of ${f.options.map((o) => o.value).join(', ')}` };
      if (f.minItems !== null && parts.length < f.minItems) return { ok: false, error: `Pick at least ${f.minItems}` };
      if (f.maxItems !== null && parts.length > f.maxItems) return { ok: false, error: `Pick at most ${f.maxItems}` };
      const picked = f.options.filter((o) => parts.includes(String(o.value))).map((o) => o.value);
      // one or many: a single choice is sent as one value, as the form showed it before (one run)
      return { ok: true, value: f.oneOrMany && picked.length === 1 ? picked[0] : picked };
    }
    case 'integer-list':
    case 'number-list': {
      // Byte sizes may be written "8 KiB": split on commas/semicolons only, so the unit stays attached.
      const parts = (f.bytes ? text.split(/[,;]+/) : text.split(/[\s,;]+/)).map((p) => p.trim()).filter(Boolean);
      const values: number[] = [];
      for (const p of parts) {
        const r = parseNumber(f, p, f.kind === 'integer-list');
        if ('error' in r) return { ok: false, error: r.error };
        values.push(r.value);
      }
      if (f.minItems !== null && values.length < f.minItems) return { ok: false, error: `Give at least ${f.minItems} value${f.minItems === 1 ? '' : 's'}` };
      if (f.maxItems !== null && values.length > f.maxItems) return { ok: false, error: `Give at most ${f.maxItems} values` };
      const dup = values.find((v, i) => values.indexOf(v) !== i);
      if (dup !== undefined) return { ok: false, error: `${dup} is listed twice` };
      return { ok: true, value: values };
    }
    default:
      return { ok: true, value: text };
  }
}

export function validateParams(fields: FieldSpec[], raw: RawValues): { params: Record<string, unknown>; errors: Record<string, string> } {
  const params: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const r = parseField(f, raw[f.name]);
    if (!r.ok) errors[f.name] = r.error;
    else if (!r.omit) params[f.name] = r.value;
  }
  return { params, errors };
}
