// A mesh's matrix as a heat map: a row per driving host, a column per serving host; each cell the link's Mbit/s and
// round trip (the backend's figures), coloured from the fastest link (green) to none (red), with its verdict. The
// slowest link is outlined and named, with the slowest host; many to one adds each client's share and the aggregate.
import { Link } from 'react-router';
import { formatDuration, formatNumber, formatPercent } from '../../../lib/format';
import { meshExportUrl, type Mesh, type MeshCell } from '../api/meshes';
import { heat, heatColour, heatGrid, isSlowest } from '../lib/heat';

const VERDICT_BADGE: Record<string, string> = { PASS: 'badge-ok', FAIL: 'badge-bad', DISTURBED: 'badge-warn', 'NO BASELINE': '' };

function Cell({ mesh, c, top, runPath }: { mesh: Mesh; c: MeshCell | undefined; top: number | null; runPath: (id: number) => string }) {
  if (c === undefined) return <td className="mesh-cell mesh-none">—</td>;
  const slowest = isSlowest(mesh, c);
  const runId = c.stream_run_id ?? c.rr_run_id;
  return (
    <td
      className={`mesh-cell${slowest ? ' mesh-slowest' : ''}`}
      style={{ background: heatColour(heat(c.mbps, top)) }}
      title={c.verdict_reason ?? undefined}
      data-testid={`cell-${c.client_host_id}-${c.server_host_id}`}
    >
      {c.mbps !== null && c.mbps !== undefined ? <strong>{formatNumber(c.mbps, 3)} Mbit/s</strong> : <span className="muted">{c.status}</span>}
      {c.rtt_us !== null && c.rtt_us !== undefined ? <div className="small">{formatNumber(c.rtt_us, 3)} µs</div> : null}
      {c.share !== null && c.share !== undefined ? <div className="small">{formatPercent(c.share)} of all</div> : null}
      <div className="small">
        {c.verdict ? <span className={`badge ${VERDICT_BADGE[c.verdict] ?? ''}`}>{c.verdict}</span> : null}
        {c.validity && c.validity !== 'valid' ? <span className="muted"> {c.validity.replace('_', ' ')}</span> : null}
        {runId ? (
          <>
            {' '}
            <Link to={runPath(runId)}>run</Link>
          </>
        ) : null}
      </div>
    </td>
  );
}

export function MeshMatrix({ mesh, runPath }: { mesh: Mesh; runPath: (id: number) => string }) {
  const g = heatGrid(mesh);
  const names = new Map([...g.rows, ...g.cols].map((h) => [h.id, h.name]));
  const link = mesh.slowest_link;
  return (
    <section aria-label="Matrix">
      <p>
        {link ? (
          <>
            Slowest link: <strong>{names.get(link.client_host_id)} → {names.get(link.server_host_id)}</strong>, {formatNumber(link.mbps, 3)} Mbit/s.{' '}
          </>
        ) : null}
        {mesh.slowest_host ? (
          <>
            Slowest host: <strong>{mesh.slowest_host.name}</strong> ({formatNumber(mesh.slowest_host.mean_mbps, 3)} Mbit/s on average over its links).{' '}
          </>
        ) : null}
        {mesh.aggregate_mbps !== null && mesh.aggregate_mbps !== undefined ? (
          <>
            Aggregate: <strong>{formatNumber(mesh.aggregate_mbps, 3)} Mbit/s</strong>, all clients together for {formatDuration(mesh.overlap_s ?? 0)}.{' '}
          </>
        ) : null}
        {mesh.wall_s !== null && mesh.wall_s !== undefined ? <>Wall time {formatDuration(mesh.wall_s)}.</> : null}
      </p>
      <div className="table-scroll">
        <table className="table mesh-matrix" aria-label="Links: rows drive, columns serve">
          <thead>
            <tr>
              <th scope="col">drives ↓ · serves →</th>
              {g.cols.map((h) => (
                <th key={h.id} scope="col">
                  {h.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {g.rows.map((r) => (
              <tr key={r.id}>
                <th scope="row">{r.name}</th>
                {g.cols.map((s) => (s.id === r.id ? <td key={s.id} className="mesh-cell mesh-self" aria-label="itself" /> : <Cell key={s.id} mesh={mesh} c={g.cell(r.id, s.id)} top={g.top} runPath={runPath} />))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="help">
        Colour: the link&apos;s Mbit/s against the fastest link measured (green) down to none (red). A cell&apos;s verdict: DISTURBED when the
        measurement itself was not valid (rerun it), else its expected band&apos;s PASS or FAIL, or NO BASELINE without a band.
      </p>
      <span className="export-links" role="group" aria-label="Export">
        <a className="button button-small" href={meshExportUrl(mesh.id, 'csv')} download={`hostbench-mesh-${mesh.id}.csv`}>
          Download CSV
        </a>
        <a className="button button-small" href={meshExportUrl(mesh.id, 'json')} download={`hostbench-mesh-${mesh.id}.json`}>
          Download JSON
        </a>
      </span>
    </section>
  );
}
