// One item of the suite editor: its experiment, that experiment's generated parameter fields (the New job form's),
// whether it runs only on hosts with a GPU, its expected duration, and the server's refusal of it, in place.
import { ParamsForm } from '../../../components/ParamsForm';
import type { RawValue } from '../../../lib/param-schema';
import type { DraftItem, ItemExperiment, ItemState } from '../lib/editor';
import { formatEstimate } from '../lib/describe';

export interface SuiteItemEditorProps {
  index: number;
  count: number;
  item: DraftItem;
  state: ItemState;
  experiments: readonly ItemExperiment[];
  server: { fields: Record<string, string>; messages: string[] } | undefined;
  onValue: (name: string, value: RawValue) => void;
  onExperiment: (kind: string) => void;
  onNeeds: (gpu: boolean) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}

export function SuiteItemEditor({ index, count, item, state, experiments, server, onValue, onExperiment, onNeeds, onMove, onRemove }: SuiteItemEditorProps) {
  const id = `suite-item-${item.key}`;
  const n = index + 1;
  const title = experiments.find((e) => e.kind === item.experiment)?.title ?? item.experiment;
  // A server error about a field the form does not show (it does not apply) is said with the item's own.
  const shown = new Set(state.fields.map((f) => f.name));
  const messages = [
    ...(server?.messages ?? []),
    ...Object.entries(server?.fields ?? {})
      .filter(([name]) => !shown.has(name))
      .map(([name, msg]) => `${name}: ${msg}`),
  ];

  return (
    <fieldset className="fieldset suite-item">
      <legend>
        Item {n}: {title}
      </legend>
      <div className="field">
        <label htmlFor={`${id}-experiment`}>Experiment</label>
        <select id={`${id}-experiment`} value={item.experiment} onChange={(e) => onExperiment(e.target.value)}>
          {experiments.some((e) => e.kind === item.experiment) ? null : <option value={item.experiment}>{item.experiment}</option>}
          {experiments.map((e) => (
            <option key={e.kind} value={e.kind}>
              {e.title} ({e.kind})
            </option>
          ))}
        </select>
        {state.problem ? <p className="field-error">{state.problem}</p> : null}
        {state.twoHost ? <p className="help">Runs between two hosts: only when two hosts are picked, the first serving.</p> : null}
      </div>
      <ParamsForm fields={state.fields} values={item.raw} errors={{ ...state.errors, ...server?.fields }} onChange={onValue} idPrefix={id} />
      <label className="check">
        <input type="checkbox" checked={item.needs === 'gpu'} onChange={(e) => onNeeds(e.target.checked)} />
        Only on hosts whose inventory lists a GPU
      </label>
      <p className="estimate">
        Expected duration of this item: <strong>{formatEstimate(state.seconds)}</strong>
        {state.seconds !== undefined ? ' on each host' : ' (fix the fields above)'}
      </p>
      {messages.length ? (
        <div className="state state-error" role="alert">
          <p>
            <strong>The server refused item {n}:</strong> {messages.join('; ')}
          </p>
        </div>
      ) : null}
      <div className="form-actions">
        <button type="button" className="button button-ghost button-small" disabled={index === 0} onClick={() => onMove(-1)} aria-label={`Move item ${n} up`}>
          Move up
        </button>
        <button type="button" className="button button-ghost button-small" disabled={index === count - 1} onClick={() => onMove(1)} aria-label={`Move item ${n} down`}>
          Move down
        </button>
        <button type="button" className="button button-danger button-small" disabled={count === 1} onClick={onRemove} aria-label={`Remove item ${n}`}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}
