// Picking the hosts of a job over several (a health check, hosts tested together): each host ticked, with whether
// its runner is online; in a larger fleet a search by name or label and "Tick the N shown"; how many are picked.
import { useId, useState } from 'react';

export interface HostOption {
  id: number;
  name: string;
  online: boolean;
  labels?: Record<string, unknown> | null;
}

/** Above this many hosts the list gets a search and a button that ticks every host it shows. */
export const FIND_ABOVE = 5;

export const labelsOf = (h: HostOption) => Object.entries(h.labels ?? {}).map(([k, v]) => `${k}=${String(v)}`);

/** The hosts whose name or a label (key=value) contains `q`, any case. */
export function matchHosts(hosts: readonly HostOption[], q: string): HostOption[] {
  const needle = q.trim().toLowerCase();
  return needle ? hosts.filter((h) => [h.name, ...labelsOf(h)].join(' ').toLowerCase().includes(needle)) : [...hosts];
}

interface Props {
  hosts: readonly HostOption[];
  picked: readonly number[];
  onChange: (ids: number[]) => void;
  /** A host that cannot be picked here (the check's peer, the mesh's server): listed, its box disabled. */
  excluded?: number | null;
}

export function HostPicker({ hosts, picked, onChange, excluded = null }: Props) {
  const id = useId();
  const [q, setQ] = useState('');
  const shown = matchHosts(hosts, q);
  const unticked = shown.filter((h) => !picked.includes(h.id) && h.id !== excluded);
  const toggle = (hostId: number, on: boolean) => onChange(on ? [...picked, hostId] : picked.filter((x) => x !== hostId));
  return (
    <>
      {hosts.length === 0 ? <p className="muted">No host has registered yet. Start a runner on a target host first.</p> : null}
      {hosts.length > FIND_ABOVE ? (
        <div className="filters">
          <div className="field">
            <label htmlFor={`${id}-find`}>Find hosts</label>
            <input id={`${id}-find`} type="search" value={q} placeholder="name or label" onChange={(e) => setQ(e.target.value)} />
          </div>
          {unticked.length ? (
            <button type="button" className="button button-small" onClick={() => onChange([...picked, ...unticked.map((h) => h.id)])}>
              Tick the {unticked.length} shown
            </button>
          ) : null}
        </div>
      ) : null}
      <ul className="host-options">
        {shown.map((h) => (
          <li key={h.id}>
            <label className="check">
              <input type="checkbox" checked={picked.includes(h.id)} disabled={h.id === excluded} onChange={(e) => toggle(h.id, e.target.checked)} />
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
  );
}
