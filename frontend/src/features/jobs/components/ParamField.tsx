// One generated form control for one schema field: select for enums, number input with min/max for
// numbers, a text box read as a list for integer lists, a checkbox for booleans. Description and
// bounds are help text; an error (ours or the server's) is shown under the control and tied to it.
import { formatBlockSize } from '../../../lib/units';
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
    case 'enum-list': {
      // A group of checkboxes; the value stays a comma-separated text like every other list.
      const picked = new Set(text.split(/[\s,;]+/).filter(Boolean));
      control = (
        <div id={id} role="group" tabIndex={-1} className="check-group" aria-labelledby={`${id}-label`} aria-describedby={describedBy} aria-invalid={error ? true : undefined}>
          {field.options.map((o) => {
            const v = String(o.value);
            return (
              <label key={v} className="check">
                <input
                  type="checkbox"
                  name={field.name}
                  value={v}
                  checked={picked.has(v)}
                  onBlur={() => onBlur?.(field.name)}
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
      break;
    }
    case 'boolean':
      control = <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(field.name, e.target.checked)} />;
      break;
    case 'integer':
    case 'number':
      control = field.bytes ? (
        <input {...common} type="text" inputMode="text" autoComplete="off" placeholder="e.g. 1 GiB" value={text} onChange={(e) => onChange(field.name, e.target.value)} />
      ) : (
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
          placeholder={field.bytes ? 'e.g. 8 B, 8 KiB, 8 MiB' : 'e.g. 1, 2, 4, 8'}
          value={text}
          onChange={(e) => onChange(field.name, e.target.value)}
        />
      );
      break;
    default:
      control = <input {...common} type="text" value={text} onChange={(e) => onChange(field.name, e.target.value)} />;
  }

  const parsed = field.kind === 'integer-list' || field.kind === 'number-list' ? parseField(field, value) : null;
  const chips = parsed?.ok && Array.isArray(parsed.value) ? (parsed.value as number[]) : null;

  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      {field.kind === 'enum-list' ? (
        <span id={`${id}-label`} className="field-label">
          {field.label}
        </span>
      ) : (
        <label htmlFor={id}>{field.label}</label>
      )}
      {control}
      {chips && chips.length ? (
        <ul className="chips" aria-hidden="true">
          {chips.map((c) => (
            <li key={c} className="chip">
              {field.bytes ? formatBlockSize(c) : c}
            </li>
          ))}
        </ul>
      ) : null}
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
