// Runs, newest first, one page of the server's answer. A checkbox per run picks it for comparison;
// the headline figure is the backend's best row mean (or the trace mean), with its unit.
import { Link } from 'react-router';
import { verdictLabels } from '../../../components/ResultBadges';
import { RunStatusBadge } from '../../../components/RunStatusBadge';
import { paths } from '../../../config/paths';
import type { RunPublic } from '../../../lib/api/types';
import { formatDateTime, formatDuration, paramSummary } from '../../../lib/format';
import { withUnit } from '../../../lib/units';
import type { HostChoice } from './HistoryFilters';

/** The figure that sums a run up in a list: the backend's stored headline (the best valid row or the trace mean,
 * or why there is none; a list carries it without the result's rows); for a full result stored without one, the
 * trace mean, else the highest row mean, with the verdict. */
export function headline(run: RunPublic): string {
  const r = run.result;
  const h = run.headline ?? r?.headline;
  if (h) {
    if (h.value === null || h.value === undefined) return h.text; // "no valid row yet; 2 disturbed"
    const left = h.left_out ? ` (${h.left_out} row${h.left_out === 1 ? '' : 's'} left out: not valid)` : '';
    return `${h.text.startsWith('mean') ? 'mean' : 'best'} ${withUnit(h.value, h.unit)}${left}`;
  }
  if (!r) return '—';
  // The verdict travels with the figure: a disturbed or oversubscribed run never reads as a plain number.
  const verdict = r.verdict && r.verdict !== 'valid' && r.verdict !== 'invalid' ? ` (${verdictLabels[r.verdict]})` : '';
  if (r.trace) return `mean ${withUnit(r.trace.mean, run.unit || r.unit)}${verdict}`;
  const best = r.rows.reduce<(typeof r.rows)[number] | null>((b, row) => (b === null || row.mean > b.mean ? row : b), null);
  if (!best) return r.verdict === 'invalid' ? '— (invalid)' : '—';
  const invalid = r.rows.some((row) => !row.valid) || r.verdict === 'invalid' ? ' (invalid rows)' : verdict;
  return `best ${withUnit(best.mean, best.unit)}${invalid}`;
}

/** The instance labels a run was handed out under (its snapshot); the host's current ones before that. */
export function runLabels(run: RunPublic, host: HostChoice | undefined): string {
  const snap = run.labels_snapshot as Record<string, unknown> | null | undefined;
  const parts = snap
    ? [snap.provider, snap.instance_type, snap.region]
    : host
      ? [host.labels.provider, host.labels.instanceType, host.labels.region]
      : [];
  return parts.filter((p): p is string => typeof p === 'string' && p !== '').join(' · ');
}

export interface HistoryTableProps {
  runs: RunPublic[];
  hostsById: Map<number, HostChoice>;
  selected: ReadonlySet<number>;
  onToggle: (id: number, on: boolean) => void;
  selectionFull: boolean;
}

export function HistoryTable({ runs, hostsById, selected, onToggle, selectionFull }: HistoryTableProps) {
  return (
    <div className="table-scroll">
      <table className="table runs-table">
        <caption className="visually-hidden">Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">
              <span className="visually-hidden">Compare</span>
            </th>
            <th scope="col">Run</th>
            <th scope="col">Experiment</th>
            <th scope="col">Host</th>
            <th scope="col">Parameters</th>
            <th scope="col">Status</th>
            <th scope="col">Result</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => {
            const host = hostsById.get(r.host_id);
            const labels = runLabels(r, host);
            const checked = selected.has(r.id);
            return (
              <tr key={r.id} className={checked ? 'row-selected' : undefined}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select run #${r.id} to compare`}
                    checked={checked}
                    disabled={!checked && selectionFull}
                    onChange={(e) => onToggle(r.id, e.target.checked)}
                  />
                </td>
                <th scope="row">
                  <Link to={paths.run(r.id)}>#{r.id}</Link>
                </th>
                <td>{r.experiment}</td>
                <td>
                  {r.host_name}
                  {labels ? <span className="muted small block">{labels}</span> : null}
                </td>
                <td className="params small">{paramSummary(r.params)}</td>
                <td>
                  <RunStatusBadge status={r.status} />
                </td>
                <td className="small">{headline(r)}</td>
                <td className="nowrap">{formatDateTime(r.created_at)}</td>
                <td className="nowrap">
                  {r.started_at && r.finished_at
                    ? formatDuration((Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000)
                    : `up to ${formatDuration(r.expected_duration_s)}`}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
