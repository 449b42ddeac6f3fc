// The hosts part of the new-job form. A two-host experiment takes exactly two hosts in the order
// picked: the first serves, the second drives; the roles are shown as badges and in words.
import { FORM_ID as ID, type HostOption } from '../lib/job-form';

export interface HostPickerProps {
  hosts: HostOption[];
  hostIds: number[];
  /** A two-host experiment (its roles: serve, drive). */
  pair: boolean;
  error: string | null;
  onToggle: (id: number, on: boolean) => void;
  onSwap: () => void;
}

export function HostPicker({ hosts, hostIds, pair, error, onToggle, onSwap }: HostPickerProps) {
  const nameOf = (id: number | undefined) => hosts.find((h) => h.id === id)?.name ?? '?';
  return (
    <fieldset
      className="fieldset"
      aria-describedby={[pair ? `${ID}-pair-roles` : '', error ? `${ID}-hosts-error` : ''].filter(Boolean).join(' ') || undefined}
    >
      <legend>{pair ? 'Hosts (two: the first serves, the second drives)' : 'Hosts'}</legend>
      {hosts.length === 0 ? <p className="muted">No host has registered yet. Start a runner on a target host first.</p> : null}
      <ul className="host-options">
        {hosts.map((h) => (
          <li key={h.id}>
            <label className="check">
              <input id={`${ID}-host-${h.id}`} type="checkbox" checked={hostIds.includes(h.id)} onChange={(e) => onToggle(h.id, e.target.checked)} />
              {h.name}
              <span className={`badge ${h.online ? 'badge-ok' : 'badge-muted'}`}>{h.online ? 'online' : 'offline'}</span>
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
