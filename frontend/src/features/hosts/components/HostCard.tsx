import { Fragment } from 'react';
import { Link } from 'react-router';
import { paths } from '../../../config/paths';
import type { HostPublic } from '../../../lib/api/types';
import type { Abilities } from '../../../lib/auth/roles';
import { formatBytes, formatDateTime, formatNumber, formatRelative } from '../../../lib/format';
import { formatBlockSize } from '../../../lib/units';
import { readCaches, readCpu, readDevices, readDiskTargets, readLabels, readMemoryBytes, readOs, readPlatform } from '../lib/inventory';
import { HostAdminActions } from './HostAdminActions';
import { HostLabelsEditor } from './HostLabelsEditor';
import { PeaksSection } from './PeaksSection';

/** `now` is when the host list was fetched, so "last seen" ages with each refresh. `can` is what the
 * signed-in role may do (the server checks again). A revoked host is greyed: it keeps its facts and
 * history, and an admin may delete it. */
export function HostCard({ host, now, can }: { host: HostPublic; now: number; can: Abilities }) {
  const cpu = readCpu(host.inventory);
  const labels = readLabels(host);
  const headingId = `host-${host.id}-name`;

  return (
    <article className={`card host-card${host.revoked ? ' host-card-revoked' : ''}`} aria-labelledby={headingId}>
      <header className="card-header">
        <h2 id={headingId} className="card-title">
          {host.name}
        </h2>
        {host.revoked ? (
          <span className="badge badge-bad" title={host.revoked_at ? `Revoked ${formatDateTime(host.revoked_at)}` : undefined}>
            revoked
          </span>
        ) : (
          <span className={`badge ${host.online ? 'badge-ok' : 'badge-muted'}`}>{host.online ? 'online' : 'offline'}</span>
        )}
      </header>
      {host.revoked ? (
        <p className="small">
          Revoked{host.revoked_at ? ` ${formatDateTime(host.revoked_at)}` : ''}: its runner can no longer call the server. Its history is kept until
          the host is deleted.
        </p>
      ) : null}
      <p className="muted small">
        {host.hostname}
        {labels.instanceType ? ` · ${labels.instanceType}` : ''}
        {' · last seen '}
        <time dateTime={host.last_seen_at ?? undefined} title={formatDateTime(host.last_seen_at)}>
          {formatRelative(host.last_seen_at, now)}
        </time>
      </p>
      {cpu.error ? <p className="field-error small">CPU inventory failed on the host: {cpu.error}</p> : null}
      <HostFacts host={host} />
      <HostLabelsEditor host={host} canEdit={can.operate && !host.revoked} />
      <InventoryDetails host={host} />
      <PeaksSection host={host} canEdit={can.operate && !host.revoked} />
      <footer className="card-footer">
        {can.operate && !host.revoked ? (
          <Link className="button" to={paths.newJob(host.id)}>
            New job on {host.name}
          </Link>
        ) : null}
        <Link className="button button-ghost" to={paths.history({ host: host.id })}>
          Runs on {host.name}
        </Link>
        {can.administer ? <HostAdminActions host={host} /> : null}
      </footer>
    </article>
  );
}

const dash = (v: number | null) => (v === null ? '—' : String(v));

/** Address, runner version, CPU, ISA, memory and kernel. */
function HostFacts({ host }: { host: HostPublic }) {
  const cpu = readCpu(host.inventory);
  const os = readOs(host.inventory);
  const mem = readMemoryBytes(host.inventory);
  return (
    <dl className="facts">
      <dt>Address</dt>
      <dd>{host.address ?? <span className="muted">not known yet</span>}</dd>
      <dt>Runner</dt>
      <dd>
        {host.runner_version}{' '}
        {host.version_mismatch ? (
          <span className="badge badge-warn" title="Re-run the install command (Add host) on this host to upgrade it in place.">
            differs from server {host.server_version}
          </span>
        ) : null}
        {host.credential_rotation_pending ? <span className="badge badge-info">credential rotation pending</span> : null}
      </dd>
      <dt>CPU</dt>
      <dd>{cpu.model ?? '—'}</dd>
      <dt>Sockets × cores × threads</dt>
      <dd>
        {dash(cpu.sockets)} × {dash(cpu.cores)} × {dash(cpu.threads)}
      </dd>
      <dt>Best ISA</dt>
      <dd>
        <strong>{cpu.bestIsa ?? '—'}</strong>
        {cpu.maxMhz !== null ? <span className="muted"> · max {formatNumber(cpu.maxMhz / 1000, 3)} GHz</span> : null}
      </dd>
      <dt>ISA</dt>
      <dd>
        {cpu.isa.length ? (
          <ul className="chips" aria-label="Instruction sets">
            {cpu.isa.map((i) => (
              <li key={i} className={`chip${i === cpu.bestIsa ? ' chip-strong' : ''}`}>
                {i}
              </li>
            ))}
          </ul>
        ) : (
          '—'
        )}
      </dd>
      <dt>Memory</dt>
      <dd>{formatBytes(mem)}</dd>
      <dt>Kernel</dt>
      <dd>
        {os.kernel ?? '—'}
        {os.distribution ? <span className="muted"> · {os.distribution}</span> : null}
      </dd>
    </dl>
  );
}

/** Caches, platform facts, disks and NICs, folded away. */
function InventoryDetails({ host }: { host: HostPublic }) {
  const caches = readCaches(host.inventory);
  const platform = readPlatform(host.inventory);
  const disks = readDevices(host.inventory, 'disks');
  const targets = readDiskTargets(host.inventory);
  const nics = readDevices(host.inventory, 'nics');
  return (
    <details className="inventory-details">
      <summary>Caches and platform</summary>
      <dl className="facts">
        <dt>Caches</dt>
        <dd>
          {caches.length ? (
            <ul className="chips" aria-label="Caches">
              {caches.map((c) => (
                <li key={c.label} className="chip">
                  {c.label} {formatBlockSize(c.bytes)}
                </li>
              ))}
            </ul>
          ) : (
            <span className="muted">not reported</span>
          )}
        </dd>
        {platform.map((f) => (
          <Fragment key={f.label}>
            <dt>{f.label}</dt>
            <dd>{f.value}</dd>
          </Fragment>
        ))}
        <dt>Disks</dt>
        <dd>{disks.length ? disks.join('; ') : <span className="muted">not reported yet</span>}</dd>
        <dt>Disk targets</dt>
        <dd title="Directories a disk job may name as its target; the runner's owner configures them (--disk-target NAME=PATH)">
          {['work (the run\'s own directory)', ...targets].join('; ')}
        </dd>
        <dt>NICs</dt>
        <dd>{nics.length ? nics.join('; ') : <span className="muted">not reported yet</span>}</dd>
      </dl>
    </details>
  );
}
