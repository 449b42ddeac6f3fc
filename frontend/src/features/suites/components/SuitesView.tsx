// The suites as cards (built-in, then saved ones with their owner), the hosts to run one on, and (operators) Run
// suite. A suite starts as one unit: every job it plans on the hosts picked, created at once or not at all (the
// server's answer in words). Each card also offers Export, and as the role allows Save as new suite, Edit, Delete.
import { useId, useState, type ReactNode } from 'react';
import { errorMessage } from '../../../lib/api/errors';
import { formatDuration } from '../../../lib/format';
import type { Experiment } from '../../../lib/api/types';
import { useStartSuiteRun, useSuiteEstimate, type Suite, type SuiteRun } from '../api/suites';
import { describeItem, formatEstimate, suiteItems, type PickedHost } from '../lib/describe';
import { SuiteActions } from './SuiteActions';

export interface SuiteHostOption extends PickedHost {
  name: string;
  online: boolean;
}

export interface SuitesViewProps {
  suites: readonly Suite[];
  experiments: readonly Experiment[];
  hosts: readonly SuiteHostOption[];
  canOperate: boolean;
  /** Whether the person may change or delete this suite (a saved one of their own, or any saved one for an admin). */
  canEdit: (suite: Suite) => boolean;
  onStarted: (run: SuiteRun) => void;
  onCopy: (suite: Suite) => void;
  onEdit: (suite: Suite) => void;
}

export function SuitesView({ suites, experiments, hosts, canOperate, canEdit, onStarted, onCopy, onEdit }: SuitesViewProps) {
  // The first online host is picked to begin with: a suite on one host is the usual case.
  const [hostIds, setHostIds] = useState<number[]>(() => {
    const first = hosts.find((h) => h.online);
    return first ? [first.id] : [];
  });
  // A host for the two-host items only (it serves, each host picked drives to it); none: the first two picked pair.
  const [peerId, setPeerId] = useState<number | null>(null);
  const peerSelectId = useId();
  // In the order picked: for a two-host item the first serves and the second drives.
  const picked = hostIds.map((id) => hosts.find((h) => h.id === id)).filter((h): h is SuiteHostOption => h !== undefined);
  const peer = peerId === null ? undefined : hosts.find((h) => h.id === peerId);
  const toggle = (id: number, on: boolean) => {
    setHostIds((ids) => (on ? [...ids.filter((x) => x !== id), id] : ids.filter((x) => x !== id)));
    if (on && id === peerId) setPeerId(null); // a host picked is not the peer as well
  };

  return (
    <>
      <fieldset className="fieldset">
        <legend>Hosts to run a suite on</legend>
        {hosts.length === 0 ? <p className="muted">No host has registered yet. Start a runner on a target host first.</p> : null}
        <ul className="host-options">
          {hosts.map((h) => (
            <li key={h.id}>
              <label className="check">
                <input type="checkbox" checked={hostIds.includes(h.id)} onChange={(e) => toggle(h.id, e.target.checked)} />
                {h.name}
                <span className={`badge ${h.online ? 'badge-ok' : 'badge-muted'}`}>{h.online ? 'online' : 'offline'}</span>
              </label>
            </li>
          ))}
        </ul>
        <p className="help">
          One-host items run on every host picked, at the same time. Two-host items (network between hosts) run only when two hosts are
          picked: the first picked serves, the second drives, unless a peer is named below.
        </p>
        <div className="field">
          <label htmlFor={peerSelectId}>Peer for the two-host items</label>
          <select
            id={peerSelectId}
            value={peerId === null ? '' : String(peerId)}
            onChange={(e) => setPeerId(e.target.value === '' ? null : Number(e.target.value))}
          >
            <option value="">None: the first two hosts picked</option>
            {hosts
              .filter((h) => !hostIds.includes(h.id))
              .map((h) => (
                <option key={h.id} value={h.id}>
                  {`${h.name}${h.online ? '' : ' (offline)'}`}
                </option>
              ))}
          </select>
          <p className="help">The peer only serves: every host picked drives to it in turn, and it runs nothing else of the suite.</p>
        </div>
      </fieldset>
      <div className="card-grid">
        {suites.map((s) => (
          <SuiteCard key={s.id} suite={s} experiments={experiments} picked={picked} peer={peer} canOperate={canOperate} onStarted={onStarted}>
            <SuiteActions suite={s} canCopy={canOperate} canEdit={canEdit(s)} onCopy={onCopy} onEdit={onEdit} />
          </SuiteCard>
        ))}
      </div>
    </>
  );
}

function SuiteCard({
  suite,
  experiments,
  picked,
  peer,
  canOperate,
  onStarted,
  children,
}: {
  suite: Suite;
  experiments: readonly Experiment[];
  picked: readonly SuiteHostOption[];
  peer: SuiteHostOption | undefined;
  canOperate: boolean;
  onStarted: (run: SuiteRun) => void;
  children: ReactNode;
}) {
  const titleId = useId();
  const start = useStartSuiteRun();
  const est = suiteItems(suite, experiments);
  const n = picked.length;
  const usual = useSuiteEstimate(suite.id, picked.map((h) => h.id), peer?.id ?? null);
  return (
    <article className="card" aria-labelledby={titleId}>
      <header className="card-header">
        <h2 id={titleId} className="card-title">
          {suite.title}
        </h2>
        {suite.builtin ? <span className="badge badge-muted">built in</span> : <span className="badge">saved by {suite.created_by ?? 'nobody now'}</span>}
      </header>
      {suite.description ? <p>{suite.description}</p> : null}
      <ul className="suite-items">
        {suite.items.map((item, i) => (
          <li key={i}>{describeItem(item, experiments)}</li>
        ))}
      </ul>
      <p className="estimate">
        Cap on one host: <strong>{formatEstimate(suite.expected_duration_one_host_s)}</strong>
        <span className="small muted"> (measuring at most, plus the reference tools&apos; allowance: the runs&apos; limit)</span>
      </p>
      {n > 0 ? (
        <p className="estimate" aria-live="polite">
          For the {n === 1 ? 'host' : `${n} hosts`} picked:{' '}
          {typeof usual.data?.typical_s === 'number' ? (
            <>
              <strong>about {formatDuration(usual.data.typical_s)}</strong>
              <span className="small muted">
                {' '}
                (the reference tools&apos; typical time included, from each host&apos;s CPUs and memory); cap {formatDuration(usual.data.cap_s)}
              </span>
            </>
          ) : usual.isError ? (
            <strong>— (the server could not estimate it: {errorMessage(usual.error)})</strong>
          ) : (
            <strong>…</strong>
          )}
          {est.twoHostItems && peer ? (
            <span className="small muted">
              {' '}
              ({est.twoHostItems} two-host {est.twoHostItems === 1 ? 'item' : 'items'} against {peer.name}, once per host picked)
            </span>
          ) : null}
          {est.twoHostItems && n < 2 && !peer ? (
            <span className="small muted">
              {' '}
              ({est.twoHostItems} two-host {est.twoHostItems === 1 ? 'item runs' : 'items run'} only when two hosts are picked)
            </span>
          ) : null}
          {est.gpuItems && !picked.some((h) => h.hasGpu) ? (
            <span className="small muted"> (GPU items are left out: no host picked lists a GPU)</span>
          ) : null}
        </p>
      ) : (
        <p className="help">Pick one or more hosts above.</p>
      )}
      {canOperate ? (
        <div className="form-actions">
          <button
            type="button"
            className="button button-primary"
            disabled={n === 0 || start.isPending}
            onClick={() =>
              start.mutate(
                { suite: suite.id, host_ids: picked.map((h) => h.id), ...(peer ? { peer_host_id: peer.id } : {}) },
                { onSuccess: onStarted },
              )
            }
          >
            {start.isPending ? 'Starting…' : 'Run suite'}
          </button>
        </div>
      ) : null}
      {start.isError ? (
        <p className="field-error" role="alert">
          Could not start {suite.title}: {errorMessage(start.error)}
        </p>
      ) : null}
      {children}
    </article>
  );
}

