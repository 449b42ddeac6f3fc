// Start a health check: a suite on the hosts a person picks (ticked one by one, or every host shown by a search),
// or on every live host with a label; optionally a peer that serves the suite's two-host items.
import { useId, useState, type FormEvent } from 'react';
import { ErrorState } from '../../../components/Status';
import type { CheckCreate } from '../api/checks';

export interface CheckHostOption {
  id: number;
  name: string;
  online: boolean;
  labels?: Record<string, unknown> | null;
}

export interface SuiteOption {
  id: string;
  title: string;
}

const labelsOf = (h: CheckHostOption) => Object.entries(h.labels ?? {}).map(([k, v]) => `${k}=${String(v)}`);

/** The hosts whose name or a label (key=value) contains `q`, any case. */
export function matchCheckHosts(hosts: readonly CheckHostOption[], q: string): CheckHostOption[] {
  const needle = q.trim().toLowerCase();
  return needle ? hosts.filter((h) => [h.name, ...labelsOf(h)].join(' ').toLowerCase().includes(needle)) : [...hosts];
}

interface Props {
  hosts: readonly CheckHostOption[];
  suites: readonly SuiteOption[];
  pending: boolean;
  error: unknown;
  onStart: (body: CheckCreate) => void;
}

export function StartCheck({ hosts, suites, pending, error, onStart }: Props) {
  const id = useId();
  const [suite, setSuite] = useState('quick');
  const [by, setBy] = useState<'picked' | 'label'>('picked');
  const [picked, setPicked] = useState<number[]>([]);
  const [q, setQ] = useState('');
  const [label, setLabel] = useState('');
  const [peer, setPeer] = useState<number | null>(null);
  const [kindBy, setKindBy] = useState('cpu');
  const shown = matchCheckHosts(hosts, q);
  const unticked = shown.filter((h) => !picked.includes(h.id) && h.id !== peer);
  const labels = [...new Set(hosts.flatMap(labelsOf))].sort();
  const keys = [...new Set(labels.map((l) => l.slice(0, l.indexOf('='))))];
  const ready = by === 'picked' ? picked.length > 0 : label.trim().includes('=');
  const toggle = (hostId: number, on: boolean) => setPicked((ids) => (on ? [...ids, hostId] : ids.filter((x) => x !== hostId)));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const who = by === 'picked' ? { host_ids: picked } : { label: label.trim() };
    onStart({ suite, ...who, kind_by: kindBy, drain_on_fail: false, ...(peer !== null ? { peer_host_id: peer } : {}) });
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Start a health check">
      <div className="field">
        <label htmlFor={`${id}-suite`}>Suite</label>
        <select id={`${id}-suite`} value={suite} onChange={(e) => setSuite(e.target.value)}>
          {suites.map((s) => (
            <option key={s.id} value={s.id}>
              {s.title}
            </option>
          ))}
        </select>
      </div>
      <fieldset className="fieldset">
        <legend>Hosts</legend>
        <label className="check">
          <input type="radio" name={`${id}-by`} checked={by === 'picked'} onChange={() => setBy('picked')} />
          The hosts I pick
        </label>
        <label className="check">
          <input type="radio" name={`${id}-by`} checked={by === 'label'} onChange={() => setBy('label')} />
          Every live host with a label
        </label>
        {by === 'picked' ? (
          <>
            {hosts.length === 0 ? <p className="muted">No host has registered yet. Start a runner on a target host first.</p> : null}
            {hosts.length > 5 ? (
              <div className="filters">
                <div className="field">
                  <label htmlFor={`${id}-find`}>Find hosts</label>
                  <input id={`${id}-find`} type="search" value={q} placeholder="name or label" onChange={(e) => setQ(e.target.value)} />
                </div>
                {unticked.length ? (
                  <button type="button" className="button button-small" onClick={() => setPicked((ids) => [...ids, ...unticked.map((h) => h.id)])}>
                    Tick the {unticked.length} shown
                  </button>
                ) : null}
              </div>
            ) : null}
            <ul className="host-options">
              {shown.map((h) => (
                <li key={h.id}>
                  <label className="check">
                    <input type="checkbox" checked={picked.includes(h.id)} disabled={h.id === peer} onChange={(e) => toggle(h.id, e.target.checked)} />
                    {h.name}
                    <span className={`badge ${h.online ? 'badge-ok' : 'badge-muted'}`}>{h.online ? 'online' : 'offline'}</span>
                  </label>
                </li>
              ))}
            </ul>
            <p className="muted small" role="status">
              {picked.length} picked
            </p>
          </>
        ) : (
          <div className="field">
            <label htmlFor={`${id}-label`}>Label</label>
            <input id={`${id}-label`} list={`${id}-labels`} value={label} onChange={(e) => setLabel(e.target.value)} placeholder="rack=b12" />
            <datalist id={`${id}-labels`}>
              {labels.map((l) => (
                <option key={l} value={l} />
              ))}
            </datalist>
          </div>
        )}
      </fieldset>
      <div className="field">
        <label htmlFor={`${id}-peer`}>Peer (serves the suite&apos;s two-host items)</label>
        <select id={`${id}-peer`} value={peer ?? ''} onChange={(e) => setPeer(e.target.value ? Number(e.target.value) : null)}>
          <option value="">none</option>
          {hosts
            .filter((h) => !picked.includes(h.id))
            .map((h) => (
              <option key={h.id} value={h.id}>
                {h.name}
              </option>
            ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-kind`}>Learn bands from hosts of the same</label>
        <select id={`${id}-kind`} value={kindBy} onChange={(e) => setKindBy(e.target.value)}>
          <option value="cpu">CPU (model and cores)</option>
          {keys.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={!ready || pending}>
          {pending ? 'Starting…' : 'Run check'}
        </button>
      </div>
      {error ? <ErrorState error={error} title="The check was not started" /> : null}
    </form>
  );
}
