// The history filter form. Selects and dates apply at once; the label fields apply on Enter, on
// leaving the field, or with "Apply". Every value lives in the URL (see lib/filters.ts).
import { useState, type FormEvent } from 'react';
import { RUN_STATUSES } from '../../../lib/api/types';
import { activeFilterCount, type FilterKey, type HistoryFilters as Filters } from '../lib/filters';

export interface HostChoice {
  id: number;
  name: string;
  labels: { provider: string | null; instanceType: string | null; region: string | null };
}

export interface HistoryFiltersProps {
  filters: Filters;
  hosts: HostChoice[];
  experiments: { kind: string; title: string }[];
  onChange: (patch: Partial<Filters>) => void;
  onClear: () => void;
}

const ID = 'history';

function TextFilter({ name, label, value, options, onCommit }: { name: FilterKey; label: string; value: string; options: string[]; onCommit: (v: string) => void }) {
  // Draft while typing; a new value from the URL (back button, clear) replaces the draft.
  const [state, setState] = useState({ base: value, draft: value });
  if (state.base !== value) setState({ base: value, draft: value });
  const commit = () => {
    if (state.draft.trim() !== value) onCommit(state.draft.trim());
  };
  const listId = `${ID}-${name}-options`;
  return (
    <div className="field">
      <label htmlFor={`${ID}-${name}`}>{label}</label>
      <input
        id={`${ID}-${name}`}
        type="text"
        name={name}
        list={listId}
        autoComplete="off"
        value={state.draft}
        placeholder="any"
        onChange={(e) => setState({ base: value, draft: e.target.value })}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            commit();
          }
        }}
      />
      <datalist id={listId}>
        {options.map((o) => (
          <option key={o} value={o} />
        ))}
      </datalist>
    </div>
  );
}

const uniq = (xs: (string | null)[]) => [...new Set(xs.filter((x): x is string => Boolean(x)))].sort();

export function HistoryFilters({ filters, hosts, experiments, onChange, onClear }: HistoryFiltersProps) {
  const active = activeFilterCount(filters);
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    onChange({
      provider: String(form.get('provider') ?? ''),
      instance_type: String(form.get('instance_type') ?? ''),
      region: String(form.get('region') ?? ''),
    });
  };
  return (
    <form className="card filters-card" role="search" aria-label="Filter runs" onSubmit={onSubmit}>
      <div className="filters-grid">
        <div className="field">
          <label htmlFor={`${ID}-host`}>Host</label>
          <select id={`${ID}-host`} value={filters.host} onChange={(e) => onChange({ host: e.target.value })}>
            <option value="">any</option>
            {hosts.map((h) => (
              <option key={h.id} value={String(h.id)}>
                {h.name}
              </option>
            ))}
            {filters.host && !hosts.some((h) => String(h.id) === filters.host) ? <option value={filters.host}>host #{filters.host}</option> : null}
          </select>
        </div>
        <TextFilter name="provider" label="Provider" value={filters.provider} options={uniq(hosts.map((h) => h.labels.provider))} onCommit={(v) => onChange({ provider: v })} />
        <TextFilter
          name="instance_type"
          label="Instance type"
          value={filters.instance_type}
          options={uniq(hosts.map((h) => h.labels.instanceType))}
          onCommit={(v) => onChange({ instance_type: v })}
        />
        <TextFilter name="region" label="Region" value={filters.region} options={uniq(hosts.map((h) => h.labels.region))} onCommit={(v) => onChange({ region: v })} />
        <div className="field">
          <label htmlFor={`${ID}-experiment`}>Experiment</label>
          <select id={`${ID}-experiment`} value={filters.experiment} onChange={(e) => onChange({ experiment: e.target.value })}>
            <option value="">any</option>
            {experiments.map((x) => (
              <option key={x.kind} value={x.kind}>
                {x.title} ({x.kind})
              </option>
            ))}
            {filters.experiment && !experiments.some((x) => x.kind === filters.experiment) ? (
              <option value={filters.experiment}>{filters.experiment}</option>
            ) : null}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${ID}-status`}>Status</label>
          <select id={`${ID}-status`} value={filters.status} onChange={(e) => onChange({ status: e.target.value })}>
            <option value="">any</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${ID}-from`}>Created from</label>
          <input id={`${ID}-from`} type="date" value={filters.from} max={filters.to || undefined} onChange={(e) => onChange({ from: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={`${ID}-to`}>Created to</label>
          <input id={`${ID}-to`} type="date" value={filters.to} min={filters.from || undefined} onChange={(e) => onChange({ to: e.target.value })} />
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="button">
          Apply
        </button>
        <button type="button" className="button button-ghost" onClick={onClear} disabled={active === 0}>
          Clear filters{active ? ` (${active})` : ''}
        </button>
      </div>
    </form>
  );
}
