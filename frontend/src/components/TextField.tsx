// One labelled input with its help and its error under it: the field turns invalid (class and
// aria-invalid) while it has an error, and the input is described by its help and error.
import type { InputHTMLAttributes, ReactNode } from 'react';

export interface TextFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'aria-invalid' | 'aria-describedby'> {
  id: string;
  label: ReactNode;
  /** Shown under the input, and marks the field invalid; null when fine. */
  error: string | null;
  help?: string;
  /** The error's id; `${id}-error` unless given. */
  errorId?: string;
}

export function TextField({ id, label, error, help, errorId = `${id}-error`, ...input }: TextFieldProps) {
  const helpId = `${id}-help`;
  const describedBy = [help ? helpId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      <input id={id} {...input} aria-invalid={error ? true : undefined} aria-describedby={describedBy} />
      {help ? (
        <p id={helpId} className="help">
          {help}
        </p>
      ) : null}
      {error ? (
        <p id={errorId} className="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
