// Start a health check: a suite on the hosts a person picks (ticked one by one, or every host shown by a search),
// or on every live host with a label; optionally a peer that serves the suite's two-host items.
import { useId, useState, type FormEvent } from 'react';
import { HostPicker, labelsOf, type HostOption } from '../../../components/HostPicker';
import { ErrorState } from '../../../components/Status';
import type { CheckCreate } from '../api/checks';

export interface SuiteOption {
  id: string;
  title: string;
}

interface Props {
  hosts: readonly HostOption[];
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
  const [label, setLabel] = useState('');
  const [peer, setPeer] = useState<number | null>(null);
  const [kindBy, setKindBy] = useState('cpu');
  const labels = [...new Set(hosts.flatMap(labelsOf))].sort();
  const keys = [...new Set(labels.map((l) => l.slice(0, l.indexOf('='))))];
  const ready = by === 'picked' ? picked.length > 0 : label.trim().includes('=');

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
          <HostPicker hosts={hosts} picked={picked} onChange={setPicked} excluded={peer} />
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
