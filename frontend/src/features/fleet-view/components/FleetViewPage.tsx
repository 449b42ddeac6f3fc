// The fleet view: every host × the headline figures (CPU FP64 at most threads, memory copy, disk,
// TCP), each cell its host's newest figure, coloured by its efficiency against its peak, outliers
// among hosts with the same label marked. A cell links to the metric's trend for that host.
import { Link, useSearchParams } from 'react-router';
import { PageHeader } from '../../../components/PageHeader';
import { Empty, ErrorState, Loading } from '../../../components/Status';
import { useTheme } from '../../../lib/theme';
import { VerdictBadge, ageText } from '../../../components/VerdictBadge';
import { useFleet, type GroupBy } from '../api/fleet';
import { EFFICIENCY_BANDS, TONE_COLORS, cellText, cellTitle, missingText, outlierCount, shownMetrics, toneOf } from '../lib/fleet';

const GROUPS: GroupBy[] = ['instance_type', 'provider', 'region'];
// Which trend a headline column opens (the run kind and op the server picks it from).
const TREND_OF: Record<string, { experiment: string; op: string }> = {
  cpu_fp64: { experiment: 'cpu', op: 'fp64' },
  memory_copy: { experiment: 'memory', op: 'copy' },
  disk_seq_read: { experiment: 'disk', op: 'seq_read' },
  tcp_pair: { experiment: 'network_drive', op: 'tcp_stream' },
  tcp_loopback: { experiment: 'network', op: 'tcp_stream' },
};

export function FleetViewPage() {
  const [search, setSearch] = useSearchParams();
  const groupBy = (GROUPS.find((g) => g === search.get('group')) ?? 'instance_type') as GroupBy;
  const fleet = useFleet(groupBy);
  const { theme } = useTheme();

  return (
    <>
      <PageHeader title="Fleet view">
        <label htmlFor="fleet-group" className="small">
          Outliers among hosts with the same
        </label>
        <select id="fleet-group" value={groupBy} onChange={(e) => setSearch(new URLSearchParams({ group: e.target.value }))}>
          {GROUPS.map((g) => (
            <option key={g} value={g}>
              {g.replace('_', ' ')}
            </option>
          ))}
        </select>
      </PageHeader>
      {fleet.isPending ? <Loading /> : null}
      {fleet.error ? <ErrorState error={fleet.error} onRetry={() => void fleet.refetch()} /> : null}
      {fleet.data ? (
        fleet.data.hosts.length === 0 ? (
          <Empty>No hosts yet.</Empty>
        ) : (
          <>
            <div className="table-scroll">
              <table className="table" aria-label="Fleet: hosts by headline figure">
                <thead>
                  <tr>
                    <th scope="col">host</th>
                    <th scope="col">{groupBy.replace('_', ' ')}</th>
                    <th scope="col">health check</th>
                    {shownMetrics(fleet.data).map((m) => (
                      <th key={m.key} scope="col" className="num">
                        {m.title}
                        <br />
                        <span className="small muted">{m.unit}</span>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {fleet.data.hosts.map((h) => (
                    <tr key={h.host_id}>
                      <th scope="row">{h.name}</th>
                      <td>{h.labels[groupBy] ?? '—'}</td>
                      <td>
                        {h.health?.[0] ? (
                          <span title={`${h.health[0].suite}, check ${h.health[0].check_id}, ${h.health[0].at}`}>
                            <VerdictBadge verdict={h.health[0].verdict} />{' '}
                            <span className="small muted">{ageText(h.health[0].age_s)} ago</span>
                          </span>
                        ) : (
                          <span className="small muted">none yet</span>
                        )}
                      </td>
                      {shownMetrics(fleet.data).map((m) => {
                        const c = h.cells[m.key];
                        if (!c) return <td key={m.key} className="num muted small">{missingText(h, m.key)}</td>;
                        const t = TREND_OF[m.key];
                        const metric = t ? `${t.experiment}|${t.op}|${c.threads}|${c.block_bytes ?? ''}` : '';
                        return (
                          <td
                            key={m.key}
                            className="num"
                            data-tone={toneOf(c.efficiency)}
                            data-outlier={c.outlier ? 'true' : undefined}
                            title={cellTitle(c)}
                            style={{ background: TONE_COLORS[toneOf(c.efficiency)][theme], outline: c.outlier ? '2px solid #dc2626' : undefined }}
                          >
                            <Link to={`/trends?host=${h.host_id}&metric=${encodeURIComponent(metric)}`}>{cellText(c)}</Link>
                            {c.outlier ? <span className="badge badge-bad"> outlier</span> : null}
                            {c.verdict !== 'valid' ? <span className="badge badge-warn"> {c.verdict}</span> : null}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p className="help">
              Colour: efficiency against the host&apos;s theoretical peak ({EFFICIENCY_BANDS.map((b) => b.label).join(', ')}; no colour:
              no peak). Outliers ({outlierCount(fleet.data)}): {fleet.data.outlier_method}. Each cell is the host&apos;s newest finished
              run with that figure; it opens its trend.
            </p>
          </>
        )
      ) : null}
    </>
  );
}
