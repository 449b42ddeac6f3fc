// The hosts part of the new-job form. A two-host experiment takes exactly two hosts in the order
// picked: the first serves, the second drives; the roles are shown as badges and in words.
import { useState } from 'react';
import { FORM_ID as ID, type HostOption } from '../lib/job-form';

/** At most this many hosts are listed at once (a fleet of 1,000 is searched, not scrolled); ticked ones always are. */
export const PICKER_SHOWN_MAX = 100;

/** The hosts whose name, host name or a label contains `q` (any case) and that carry `label` ("key=value"). */
export function matchHosts(hosts: HostOption[], q: string, label: string): HostOption[] {
  const needle = q.trim().toLowerCase();
  const [key, value] = label ? [label.slice(0, label.indexOf('=')), label.slice(label.indexOf('=') + 1)] : ['', ''];
  return hosts.filter((h) => {
    if (label && h.labels?.[key] !== value) return false;
    if (!needle) return true;
    const text = [h.name, h.hostname ?? '', ...Object.entries(h.labels ?? {}).map(([k, v]) => `${k}=${v}`)].join(' ').toLowerCase();
    return text.includes(needle);
  });
}

/** Every key=value the hosts carry, sorted, with how many hosts carry it. */
export function labelChoices(hosts: HostOption[]): { value: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const h of hosts) for (const [k, v] of Object.entries(h.labels ?? {})) counts.set(`${k}=${v}`, (counts.get(`${k}=${v}`) ?? 0) + 1);
  return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([value, count]) => ({ value, count }));
}

export interface HostPickerProps {
  hosts: HostOption[];
  hostIds: number[];
  /** A two-host experiment (its roles: serve, drive). */
  pair: boolean;
  /** A GPU experiment: a host whose inventory lists no GPU says so. */
  needsGpu?: boolean;
  error: string | null;
  onToggle: (id: number, on: boolean) => void;
  onSwap: () => void;
}

export function HostPicker({ hosts, hostIds, pair, needsGpu = false, error, onToggle, onSwap }: HostPickerProps) {
  const nameOf = (id: number | undefined) => hosts.find((h) => h.id === id)?.name ?? '?';
  const [q, setQ] = useState('');
  const [label, setLabel] = useState('');
  const labels = labelChoices(hosts);
  const filtering = q.trim() !== '' || label !== '';
  const matching = matchHosts(hosts, q, label);
  const listed = [...hosts.filter((h) => hostIds.includes(h.id) && !matching.includes(h)), ...matching].slice(0, Math.max(PICKER_SHOWN_MAX, hostIds.length));
  const untickedMatching = matching.filter((h) => !hostIds.includes(h.id));
  return (
    <fieldset
      className="fieldset"
      aria-describedby={[pair ? `${ID}-pair-roles` : '', error ? `${ID}-hosts-error` : ''].filter(Boolean).join(' ') || undefined}
    >
      <legend>{pair ? 'Hosts (two: the first serves, the second drives)' : 'Hosts'}</legend>
      {hosts.length === 0 ? <p className="muted">No host has registered yet. Start a runner on a target host first.</p> : null}
      {hosts.length > 5 ? (
        <div className="filters host-picker-filters">
          <div className="field">
            <label htmlFor={`${ID}-host-search`}>Find hosts</label>
            <input id={`${ID}-host-search`} type="search" value={q} placeholder="name, host name or label" onChange={(e) => setQ(e.target.value)} />
          </div>
          {labels.length ? (
            <div className="field">
              <label htmlFor={`${ID}-host-label`}>With label</label>
              <select id={`${ID}-host-label`} value={label} onChange={(e) => setLabel(e.target.value)}>
                <option value="">any</option>
                {labels.map((l) => (
                  <option key={l.value} value={l.value}>
                    {l.value.replace('=', ': ')} ({l.count})
                  </option>
                ))}
              </select>
            </div>
          ) : null}
          {!pair && filtering && untickedMatching.length ? (
            <button type="button" className="button button-small" onClick={() => untickedMatching.forEach((h) => onToggle(h.id, true))}>
              Tick the {untickedMatching.length.toLocaleString('en-US')} matching
            </button>
          ) : null}
          <p className="muted small" role="status">
            {hostIds.length.toLocaleString('en-US')} ticked · {matching.length.toLocaleString('en-US')} of {hosts.length.toLocaleString('en-US')} match
            {matching.length > listed.length ? `; the first ${listed.length} are listed: narrow the search for the rest` : ''}
          </p>
        </div>
      ) : null}
      <ul className="host-options">
        {listed.map((h) => (
          <li key={h.id}>
            <label className="check">
              <input id={`${ID}-host-${h.id}`} type="checkbox" checked={hostIds.includes(h.id)} onChange={(e) => onToggle(h.id, e.target.checked)} />
              {h.name}
              <span className={`badge ${h.online ? 'badge-ok' : 'badge-muted'}`}>{h.online ? 'online' : 'offline'}</span>
              {needsGpu && h.gpus === 0 ? <span className="badge badge-warn">no GPU</span> : null}
              {pair && hostIds.indexOf(h.id) === 0 ? <span className="badge badge-info">serves</span> : null}
              {pair && hostIds.indexOf(h.id) === 1 ? <span className="badge badge-info">drives</span> : null}
            </label>
          </li>
        ))}
      </ul>
      {pair ? <PairRoles serves={hostIds[0]} drives={hostIds[1]} picked={hostIds.length} nameOf={nameOf} onSwap={onSwap} /> : null}
      {error ? (
        <p id={`${ID}-hosts-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

interface PairRolesProps {
  serves: number | undefined;
  drives: number | undefined;
  picked: number;
  nameOf: (id: number | undefined) => string;
  onSwap: () => void;
}

function PairRoles({ serves, drives, picked, nameOf, onSwap }: PairRolesProps) {
  return (
    <div id={`${ID}-pair-roles`} className="pair-roles" role="note" aria-label="Host roles">
      {picked >= 2 ? (
        <p>
          <strong>{nameOf(serves)}</strong> serves (listens on a port it chooses); <strong>{nameOf(drives)}</strong> drives (connects to it
          and measures).{' '}
          <button type="button" className="button button-small" onClick={onSwap}>
            Swap roles
          </button>
        </p>
      ) : (
        <p className="help">
          {picked === 1
            ? `${nameOf(serves)} serves; pick the host that drives (connects to it and measures).`
            : 'Pick the host that serves first, then the host that drives (connects to it and measures).'}
        </p>
      )}
    </div>
  );
}
