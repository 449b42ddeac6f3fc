// One schedule's firings, newest first, a page at a time: started (a link to its suite run), skipped or failed,
// with the hosts left out and the reasons.
import { useState } from 'react';
import { Link } from 'react-router';
import { Empty, ErrorState, Loading } from '../../../components/Status';
import { formatDateTime } from '../../../lib/format';
import { HISTORY_PAGE, useScheduleHistory } from '../api/schedules';
import { OUTCOME_BADGE, firingDetail } from '../lib/words';

export function ScheduleHistory({ scheduleId, title, runPath }: { scheduleId: number; title: string; runPath: (id: number) => string }) {
  const [offset, setOffset] = useState(0);
  const h = useScheduleHistory(scheduleId, offset);
  if (h.isPending) return <Loading label="Loading its history…" />;
  if (h.isError) return <ErrorState error={h.error} title="Could not load its history" onRetry={() => void h.refetch()} />;
  if (h.data.count === 0) return <Empty>It has not fired yet.</Empty>;
  return (
    <div className="table-scroll">
      <table className="table" aria-label={`History of ${title}`}>
        <thead>
          <tr>
            <th scope="col">Fired</th>
            <th scope="col">By</th>
            <th scope="col">Outcome</th>
            <th scope="col">Suite run</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {h.data.data.map((f) => (
            <tr key={f.id}>
              <td>{formatDateTime(f.fired_at)}</td>
              <td>{f.trigger === 'beat' ? 'schedule' : 'run now'}</td>
              <td>
                <span className={OUTCOME_BADGE[f.outcome]}>{f.outcome}</span>
              </td>
              <td>{f.suite_run_id !== null ? <Link to={runPath(f.suite_run_id)}>#{f.suite_run_id}</Link> : '—'}</td>
              <td className="small">{firingDetail(f) || '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {h.data.count > HISTORY_PAGE ? (
        <div className="form-actions">
          <button type="button" className="button button-small" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - HISTORY_PAGE))}>
            Newer
          </button>
          <span className="small muted">
            {offset + 1}–{Math.min(offset + HISTORY_PAGE, h.data.count)} of {h.data.count}
          </span>
          <button
            type="button"
            className="button button-small"
            disabled={offset + HISTORY_PAGE >= h.data.count}
            onClick={() => setOffset(offset + HISTORY_PAGE)}
          >
            Older
          </button>
        </div>
      ) : null}
    </div>
  );
}
