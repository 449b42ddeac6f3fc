// The suite editor: title, description and items, each item one job body edited with the New job form's generated
// fields, each with its expected duration and the suite's total on one host. Saves a new suite (POST) or changes
// a saved one (PUT); the server checks every item as a job body, and its 422 lands next to the item it names.
import { useState, type FormEvent } from 'react';
import type { RawValue } from '../../../lib/param-schema';
import { useSuiteMutations, type Suite } from '../api/suites';
import { formatEstimate } from '../lib/describe';
import {
  itemState,
  mapSuiteErrors,
  newItem,
  refusalText,
  suiteBody,
  suiteTotal,
  withValue,
  type Draft,
  type DraftItem,
  type ItemExperiment,
  type SuiteErrors,
} from '../lib/editor';
import { SuiteItemEditor } from './SuiteItemEditor';

export interface SuiteEditorProps {
  experiments: readonly ItemExperiment[];
  initial: Draft;
  /** The saved suite being changed; none for a new one (also a copy of another). */
  suiteId?: string;
  onSaved: (suite: Suite) => void;
  onCancel: () => void;
}

const NONE: SuiteErrors = { items: {}, title: null, description: null, form: [] };

export function SuiteEditor({ experiments, initial, suiteId, onSaved, onCancel }: SuiteEditorProps) {
  const [draft, setDraft] = useState<Draft>(initial);
  const [adding, setAdding] = useState(experiments[0]?.kind ?? '');
  const [server, setServer] = useState<SuiteErrors>(NONE);
  const [problem, setProblem] = useState<string | null>(null);
  const { save, update } = useSuiteMutations();
  const pending = save.isPending || update.isPending;

  const states = draft.items.map((item) => itemState(item, experiments));
  const total = suiteTotal(states, draft.items);
  const refused = refusalText(server);

  const setItems = (f: (items: DraftItem[]) => DraftItem[]) => {
    setDraft((d) => ({ ...d, items: f(d.items) }));
    // The server's refusal named items by position: once they change, it no longer says where.
    setServer((s) => ({ ...s, items: {}, form: [] }));
    setProblem(null);
  };
  const changeItem = (key: number, f: (item: DraftItem) => DraftItem) => setItems((items) => items.map((it) => (it.key === key ? f(it) : it)));
  const move = (index: number, by: -1 | 1) =>
    setItems((items) => {
      const next = [...items];
      const [it] = next.splice(index, 1);
      next.splice(index + by, 0, it as DraftItem);
      return next;
    });

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const r = suiteBody(draft, experiments);
    if ('error' in r) {
      setProblem(r.error);
      return;
    }
    setProblem(null);
    const opts = { onSuccess: (s: Suite) => onSaved(s), onError: (err: unknown) => setServer(mapSuiteErrors(err)) };
    if (suiteId) update.mutate({ id: suiteId, body: r.body }, opts);
    else save.mutate(r.body, opts);
  };

  return (
    <form className="card form" onSubmit={onSubmit} noValidate aria-label="Suite editor">
      <div className={`field${server.title ? ' field-invalid' : ''}`}>
        <label htmlFor="suite-title">Title</label>
        <input
          id="suite-title"
          type="text"
          required
          maxLength={200}
          value={draft.title}
          aria-invalid={server.title ? true : undefined}
          onChange={(e) => setDraft((d) => ({ ...d, title: e.target.value }))}
        />
        {server.title ? <p className="field-error">{server.title}</p> : null}
      </div>
      <div className={`field${server.description ? ' field-invalid' : ''}`}>
        <label htmlFor="suite-description">Description</label>
        <textarea
          id="suite-description"
          rows={2}
          maxLength={2000}
          value={draft.description}
          onChange={(e) => setDraft((d) => ({ ...d, description: e.target.value }))}
        />
        {server.description ? <p className="field-error">{server.description}</p> : null}
      </div>

      {draft.items.map((item, i) => (
        <SuiteItemEditor
          key={item.key}
          index={i}
          count={draft.items.length}
          item={item}
          state={states[i] as (typeof states)[number]}
          experiments={experiments}
          server={server.items[i]}
          onValue={(name: string, value: RawValue) => changeItem(item.key, (it) => withValue(it, name, value))}
          onExperiment={(kind) => {
            const e = experiments.find((x) => x.kind === kind);
            if (e) changeItem(item.key, (it) => ({ ...newItem(e), key: it.key, needs: it.needs }));
          }}
          onNeeds={(gpu) => changeItem(item.key, (it) => ({ ...it, needs: gpu ? 'gpu' : null }))}
          onMove={(by) => move(i, by)}
          onRemove={() => setItems((items) => items.filter((it) => it.key !== item.key))}
        />
      ))}

      <div className="field">
        <label htmlFor="suite-add-experiment">Experiment of a new item</label>
        <div className="form-actions">
          <select id="suite-add-experiment" value={adding} onChange={(e) => setAdding(e.target.value)}>
            {experiments.map((e) => (
              <option key={e.kind} value={e.kind}>
                {e.title} ({e.kind})
              </option>
            ))}
          </select>
          <button
            type="button"
            className="button"
            disabled={draft.items.length >= 50}
            onClick={() => {
              const e = experiments.find((x) => x.kind === adding);
              if (e) setItems((items) => [...items, newItem(e)]);
            }}
          >
            Add item
          </button>
        </div>
      </div>

      <p className="estimate" aria-live="polite">
        Expected duration of the suite on one host: <strong>{formatEstimate(total.oneHost)}</strong>
        {total.leftOut ? (
          <span className="small muted">
            {' '}
            ({total.leftOut} {total.leftOut === 1 ? 'item needs' : 'items need'} two hosts or a GPU and {total.leftOut === 1 ? 'is' : 'are'} not counted)
          </span>
        ) : null}
      </p>

      {problem || refused ? (
        <div className="state state-error" role="alert">
          <p>
            <strong>{problem ? 'Not saved:' : 'The server refused the suite:'}</strong> {problem ?? refused}
          </p>
        </div>
      ) : null}

      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? 'Saving…' : suiteId ? 'Save changes' : 'Save suite'}
        </button>
        <button type="button" className="button button-ghost" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
