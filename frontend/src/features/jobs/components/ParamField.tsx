// One generated form control for one schema field: select for enums, number input with min/max for
// numbers, a text box read as a list for integer lists, a checkbox for booleans. Description and
// bounds are help text; an error (ours or the server's) is shown under the control and tied to it.
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
  const common = {
    id,
    name: field.name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
    onBlur: () => onBlur?.(field.name),
  } as const;
  const text = typeof value === 'string' ? value : '';

  let control;
  switch (field.kind) {
    case 'enum':
      control = (
        <select {...common} value={text} onChange={(e) => onChange(field.name, e.target.value)}>
          {field.options.map((o) => (
            <option key={String(o.value)} value={String(o.value)}>
              {o.label}
            </option>
          ))}
        </select>
      );
      break;
    case 'boolean':
      control = <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(field.name, e.target.checked)} />;
      break;
    case 'integer':
    case 'number':
      control = (
        <input
          {...common}
          type="number"
          inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'}
          step={field.kind === 'integer' ? 1 : 'any'}
          min={field.min ?? undefined}
          max={field.max ?? undefined}
          value={text}
          onChange={(e) => onChange(field.name, e.target.value)}
        />
      );
      break;
    case 'integer-list':
    case 'number-list':
      control = (
        <input
          {...common}
          type="text"
          inputMode="numeric"
          autoComplete="off"
          placeholder="e.g. 1, 2, 4, 8"
          value={text}
          onChange={(e) => onChange(field.name, e.target.value)}
        />
      );
      break;
    default:
      control = <input {...common} type="text" value={text} onChange={(e) => onChange(field.name, e.target.value)} />;
  }

  const parsed = field.kind.endsWith('-list') ? parseField(field, value) : null;
  const chips = parsed?.ok && Array.isArray(parsed.value) ? (parsed.value as number[]) : null;

  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{field.label}</label>
      {control}
      {chips && chips.length ? (
        <ul className="chips" aria-hidden="true">
          {chips.map((c) => (
            <li key={c} className="chip">
              {c}
            </li>
          ))}
        </ul>
      ) : null}
      {field.description || bounds ? (
        <p id={helpId} className="help">
          {field.description}
          {bounds ? <span className="bounds">{field.description ? ' · ' : ''}allowed {bounds}{field.kind.endsWith('-list') ? ' each, comma-separated' : ''}</span> : null}
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
