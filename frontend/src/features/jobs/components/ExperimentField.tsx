// The new-job form's experiment choice, with the chosen experiment's description and the server's
// error about it, if any.
import type { Experiment } from '../../../lib/api/types';
import { FORM_ID as ID } from '../lib/job-form';

export interface ExperimentFieldProps {
  experiments: Experiment[];
  kind: string;
  description: string | undefined;
  error: string | null;
  onChange: (kind: string) => void;
}

export function ExperimentField({ experiments, kind, description, error, onChange }: ExperimentFieldProps) {
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={`${ID}-experiment`}>Experiment</label>
      <select id={`${ID}-experiment`} value={kind} aria-describedby={`${ID}-experiment-help`} onChange={(e) => onChange(e.target.value)}>
        {experiments.map((x) => (
          <option key={x.kind} value={x.kind}>
            {x.title}
          </option>
        ))}
      </select>
      <p id={`${ID}-experiment-help`} className="help">
        {description}
      </p>
      {error ? <p className="field-error">{error}</p> : null}
    </div>
  );
}
