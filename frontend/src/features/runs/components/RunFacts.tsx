// A run's facts in one line of pairs: parameters, when it was created, started and finished, the
// attempt, who created it and, when cancelled, who cancelled it.
import type { RunPublic } from '../../../lib/api/types';
import { formatDateTime, paramSummary } from '../../../lib/format';

export function RunFacts({ run }: { run: RunPublic }) {
  return (
    <dl className="facts facts-inline">
      <div>
        <dt>Parameters</dt>
        <dd className="params">{paramSummary(run.params)}</dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>{formatDateTime(run.created_at)}</dd>
      </div>
      <div>
        <dt>Started</dt>
        <dd>{formatDateTime(run.started_at)}</dd>
      </div>
      <div>
        <dt>Finished</dt>
        <dd>{formatDateTime(run.finished_at)}</dd>
      </div>
      <div>
        <dt>Attempt</dt>
        <dd>{run.attempt}</dd>
      </div>
      <div>
        <dt>Created by</dt>
        <dd>{run.created_by ?? <span className="muted">unknown</span>}</dd>
      </div>
      {run.cancelled_by ? (
        <div>
          <dt>Cancelled by</dt>
          <dd>{run.cancelled_by}</dd>
        </div>
      ) : null}
    </dl>
  );
}
