// The parameter part of a job body, generated from the experiment's JSON Schema (the New job form, a suite's items).
import type { FieldSpec, RawValue, RawValues } from '../lib/param-schema';
import { ParamField } from './ParamField';

export interface ParamsFormProps {
  fields: FieldSpec[];
  values: RawValues;
  errors: Record<string, string>;
  onChange: (name: string, value: RawValue) => void;
  onBlur?: (name: string) => void;
  idPrefix: string;
}

export function ParamsForm({ fields, values, errors, onChange, onBlur, idPrefix }: ParamsFormProps) {
  if (fields.length === 0) return <p className="muted">This experiment has no parameters.</p>;
  return (
    <div className="param-grid">
      {fields.map((f) => (
        <ParamField
          key={f.name}
          field={f}
          id={`${idPrefix}-${f.name}`}
          value={values[f.name]}
          error={errors[f.name] ?? null}
          onChange={onChange}
          onBlur={onBlur}
        />
      ))}
    </div>
  );
}
