// One generated form control for one schema field: select for enums, number input with min/max for
// numbers, a text box read as a list for integer lists, a checkbox for booleans. Description and
// bounds are help text; an error (ours or the server's) is shown under the control and tied to it.
import { formatBlockSize } from '../lib/units';
import type { FieldSpec, RawValue } from '../lib/param-schema';
import { describeBounds, parseField } from '../lib/param-schema';

export interface ParamFieldProps {
  field: FieldSpec;
  id: string;
  value: RawValue | undefined;
  error: string | null;
  onChange: (name: string, value: RawValue) => void;
  onBlur?: (name: string) => void;
}

export function ParamField({ field, id, value, error, onChange, onBlur }: ParamFieldProps) {
  const helpId = `${id}-help`;
  const errId = `${id}-error`;
  const bounds = describeBounds(field);
  const describedBy = [field.description || bounds ? helpId : null, error ? errId : null].filter(Boolean).join(' ') || undefined;
  const common: CommonProps = {
    id,
    name: field.name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
    onBlur: () => onBlur?.(field.name),
  };

  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      {field.kind === 'enum-list' ? (
        <span id={`${id}-label`} className="field-label">
          {field.label}
        </span>
      ) : (
        <label htmlFor={id}>{field.label}</label>
      )}
      <ParamControl field={field} value={value} common={common} onChange={onChange} />
      <ListChips field={field} value={value} />
      {field.description || bounds ? (
        <p id={helpId} className="help">
          {field.description}
          {bounds ? <span className="bounds">{field.description ? ' · ' : ''}allowed {bounds}{field.kind === 'integer-list' || field.kind === 'number-list' ? ' each, comma-separated' : ''}</span> : null}
        </p>
      ) : null}
      {error ? (
        <p id={errId} className="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** Attributes every control shares: id, name, invalid state, help and error, blur. */
interface CommonProps {
  id: string;
  name: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
  onBlur: () => void;
}

interface ControlProps {
  field: FieldSpec;
  value: RawValue | undefined;
  common: CommonProps;
  onChange: (name: string, value: RawValue) => void;
}

/** The control for the field's kind. */
function ParamControl({ field, value, common, onChange }: ControlProps) {
  const text = typeof value === 'string' ? value : '';
  const onText = (e: { target: { value: string } }) => onChange(field.name, e.target.value);
  switch (field.kind) {
    case 'enum':
      return (
        <select {...common} value={text} onChange={onText}>
          {field.options.map((o) => (
            <option key={String(o.value)} value={String(o.value)}>
              {o.label}
            </option>
          ))}
        </select>
      );
    case 'enum-list':
      return <EnumListControl field={field} value={value} common={common} onChange={onChange} />;
    case 'boolean':
      return <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(field.name, e.target.checked)} />;
    case 'integer':
    case 'number':
      return field.bytes ? (
        <input {...common} type="text" inputMode="text" autoComplete="off" placeholder="e.g. 1 GiB" value={text} onChange={onText} />
      ) : (
        <input
          {...common}
          type="number"
          inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'}
          step={field.kind === 'integer' ? 1 : 'any'}
          min={field.min ?? undefined}
          max={field.max ?? undefined}
          value={text}
          onChange={onText}
        />
      );
    case 'integer-list':
    case 'number-list':
      return (
        <input
          {...common}
          type="text"
          inputMode="numeric"
          autoComplete="off"
          placeholder={field.bytes ? 'e.g. 8 B, 8 KiB, 8 MiB' : 'e.g. 1, 2, 4, 8'}
          value={text}
          onChange={onText}
        />
      );
    default:
      return <input {...common} type="text" value={text} onChange={onText} />;
  }
}

/** A group of checkboxes; the value stays a comma-separated text like every other list. */
function EnumListControl({ field, value, common, onChange }: ControlProps) {
  const picked = new Set((typeof value === 'string' ? value : '').split(/[\s,;]+/).filter(Boolean));
  const { id, onBlur } = common;
  return (
    <div id={id} role="group" tabIndex={-1} className="check-group" aria-labelledby={`${id}-label`} aria-describedby={common['aria-describedby']} aria-invalid={common['aria-invalid']}>
      {field.options.map((o) => {
        const v = String(o.value);
        return (
          <label key={v} className="check">
            <input
              type="checkbox"
              name={field.name}
              value={v}
              checked={picked.has(v)}
              onBlur={onBlur}
              onChange={(e) => {
                const next = field.options.map((x) => String(x.value)).filter((x) => (x === v ? e.target.checked : picked.has(x)));
                onChange(field.name, next.join(', '));
              }}
            />
            {o.label}
          </label>
        );
      })}
    </div>
  );
}

/** A list field's values as read, as chips under the box (hidden from screen readers: the text says it). */
function ListChips({ field, value }: { field: FieldSpec; value: RawValue | undefined }) {
  const parsed = field.kind === 'integer-list' || field.kind === 'number-list' ? parseField(field, value) : null;
  const chips = parsed?.ok && Array.isArray(parsed.value) ? (parsed.value as number[]) : null;
  if (!chips || !chips.length) return null;
  return (
    <ul className="chips" aria-hidden="true">
      {chips.map((c) => (
        <li key={c} className="chip">
          {field.bytes ? formatBlockSize(c) : c}
        </li>
      ))}
    </ul>
  );
}
