// Pick the runs to compare and the baseline: by id, or from the latest finished runs with
// checkboxes. The selection is the page's URL (`?runs=…&baseline=…`), so it can be shared.
import { useState, type FormEvent } from 'react';
import { RunStatusBadge } from '../../../components/RunStatusBadge';
import { COMPARE_MAX_RUNS } from '../../../config/paths';
import type { RunPublic } from '../../../lib/api/types';
import { formatDateTime, paramSummary } from '../../../lib/format';
import type { CompareSelection } from '../lib/compare';

export interface RunPickerProps {
  selection: CompareSelection;
  /** Loaded runs of the selection, by id (a missing id was not found). */
  runsById: Map<number, RunPublic>;
  loadingSelection: boolean;
  recent: RunPublic[] | undefined;
  recentError: string | null;
  onChange: (next: CompareSelection) => void;
}

const ID = 'compare';

export function RunPicker({ selection, runsById, loadingSelection, recent, recentError, onChange }: RunPickerProps) {
  const full = selection.ids.length >= COMPARE_MAX_RUNS;
  const add = (id: number) => {
    if (selection.ids.includes(id) || full) return;
    onChange({ ids: [...selection.ids, id], baseline: selection.baseline ?? id });
  };
  const remove = (id: number) => {
    const ids = selection.ids.filter((x) => x !== id);
    onChange({ ids, baseline: selection.baseline === id ? (ids[0] ?? null) : selection.baseline });
  };

  return (
    <section className="card picker" aria-labelledby={`${ID}-picked`}>
      <h2 id={`${ID}-picked`}>Runs in this comparison</h2>
      {selection.ids.length === 0 ? (
        <p className="muted">None yet: add runs by id or tick them below (or in History).</p>
      ) : (
        <PickedRuns selection={selection} runsById={runsById} loadingSelection={loadingSelection} onChange={onChange} onRemove={remove} />
      )}
      <AddByIds selection={selection} onChange={onChange} />
      <details className="recent" open={selection.ids.length < 2}>
        <summary>Latest finished runs</summary>
        <RecentRuns recent={recent} error={recentError} picked={selection.ids} full={full} onAdd={add} onRemove={remove} />
      </details>
    </section>
  );
}

/** The runs picked, each with a baseline radio and a Remove button; an id not loaded says why. */
function PickedRuns({
  selection, runsById, loadingSelection, onChange, onRemove,
}: Pick<RunPickerProps, 'selection' | 'runsById' | 'loadingSelection' | 'onChange'> & { onRemove: (id: number) => void }) {
  return (
    <fieldset className="fieldset">
      <legend>Baseline</legend>
      <ul className="picked-list">
        {selection.ids.map((id) => {
          const run = runsById.get(id);
          return (
            <li key={id}>
              <label className="check">
                <input type="radio" name="baseline" checked={selection.baseline === id} onChange={() => onChange({ ...selection, baseline: id })} />
                <strong>#{id}</strong>{' '}
                {run ? (
                  <span>
                    {run.host_name} · {run.experiment} <RunStatusBadge status={run.status} />
                  </span>
                ) : loadingSelection ? (
                  <span className="muted">loading…</span>
                ) : (
                  <span className="field-error">not found</span>
                )}
              </label>
              <button type="button" className="button button-ghost button-small" onClick={() => onRemove(id)} aria-label={`Remove run #${id}`}>
                Remove
              </button>
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}

/** Run ids typed in, comma- or space-separated; duplicates and ids past the limit are skipped, and said so. */
function AddByIds({ selection, onChange }: Pick<RunPickerProps, 'selection' | 'onChange'>) {
  const [idText, setIdText] = useState('');
  const [idError, setIdError] = useState<string | null>(null);
  const full = selection.ids.length >= COMPARE_MAX_RUNS;

  const onAdd = (e: FormEvent) => {
    e.preventDefault();
    const ids = idText
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((s) => (/^\d{1,12}$/.test(s) ? Number(s) : NaN));
    if (!ids.length || ids.some((n) => !Number.isInteger(n) || n <= 0)) {
      setIdError('Enter run ids as whole numbers, e.g. 12 or 12, 15');
      return;
    }
    const next = [...selection.ids];
    for (const id of ids) if (!next.includes(id) && next.length < COMPARE_MAX_RUNS) next.push(id);
    setIdError(next.length === selection.ids.length + ids.length ? null : `At most ${COMPARE_MAX_RUNS} runs; duplicates are skipped`);
    setIdText('');
    onChange({ ids: next, baseline: selection.baseline ?? next[0] ?? null });
  };

  return (
    <form className="add-by-id" onSubmit={onAdd} noValidate>
      <div className={`field field-inline${idError ? ' field-invalid' : ''}`}>
        <label htmlFor={`${ID}-add-id`}>Add run ids</label>
        <input
          id={`${ID}-add-id`}
          type="text"
          inputMode="numeric"
          value={idText}
          placeholder="e.g. 12, 15"
          aria-invalid={idError ? true : undefined}
          aria-describedby={idError ? `${ID}-add-id-error` : undefined}
          onChange={(e) => {
            setIdText(e.target.value);
            setIdError(null);
          }}
        />
        <button type="submit" className="button" disabled={full}>
          Add
        </button>
      </div>
      {idError ? (
        <p id={`${ID}-add-id-error`} className="field-error">
          {idError}
        </p>
      ) : null}
    </form>
  );
}

interface RecentRunsProps {
  recent: RunPublic[] | undefined;
  error: string | null;
  picked: number[];
  full: boolean;
  onAdd: (id: number) => void;
  onRemove: (id: number) => void;
}

/** The latest finished runs with a checkbox each (none can be ticked once the comparison is full). */
function RecentRuns({ recent, error, picked, full, onAdd, onRemove }: RecentRunsProps) {
  if (error) return <p className="field-error">Could not load runs: {error}</p>;
  if (!recent) return <p className="muted">Loading…</p>;
  if (recent.length === 0) return <p className="muted">No finished run yet.</p>;
  return (
    <ul className="recent-list">
      {recent.map((r) => {
        const checked = picked.includes(r.id);
        return (
          <li key={r.id}>
            <label className="check">
              <input type="checkbox" checked={checked} disabled={!checked && full} onChange={(e) => (e.target.checked ? onAdd(r.id) : onRemove(r.id))} />
              <strong>#{r.id}</strong> {r.host_name} · {r.experiment} <span className="params small">{paramSummary(r.params)}</span>{' '}
              <span className="muted small">{formatDateTime(r.created_at)}</span>
            </label>
          </li>
        );
      })}
    </ul>
  );
}
