// Schedules: every schedule with its recurrence in words, its target, its next fire time and latest firing; the
// enabled toggle, edit, run now and delete for those who may (its owner or an admin changes it, any operator runs it);
// a schedule's history under it; and the form that creates one. Viewers see the list and the histories only.
import { Fragment, useState } from 'react';
import { Link } from 'react-router';
import { PageHeader } from '../../../components/PageHeader';
import { Empty, ErrorState, Loading } from '../../../components/Status';
import { errorMessage } from '../../../lib/api/errors';
import { useAbilities, useMe } from '../../../lib/auth/me';
import { formatDateTime } from '../../../lib/format';
import { useScheduleHosts, useScheduleMutations, useSchedules, type Schedule } from '../api/schedules';
import { OUTCOME_BADGE, bodyOf, recurrenceText, targetText } from '../lib/words';
import { ScheduleForm } from './ScheduleForm';
import { ScheduleHistory } from './ScheduleHistory';

const suiteRunPath = (id: number) => `/suite-runs/${id}`;

export function SchedulesPage() {
  const schedules = useSchedules();
  const hosts = useScheduleHosts();
  const me = useMe();
  const can = useAbilities();
  const m = useScheduleMutations();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Schedule | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const names = new Map((hosts.data?.data ?? []).map((h) => [h.id, h.name]));
  const mine = (s: Schedule) => can.operate && (can.administer || s.created_by === me.data?.name);
  const failed = m.update.error ?? m.remove.error ?? m.runNow.error;

  let body;
  if (schedules.isPending) body = <Loading label="Loading schedules…" />;
  else if (schedules.isError) body = <ErrorState error={schedules.error} title="Could not load schedules" onRetry={() => void schedules.refetch()} />;
  else if (schedules.data.data.length === 0) body = <Empty>No schedule yet.{can.operate ? ' Create one to run a suite again and again.' : ''}</Empty>;
  else
    body = (
      <div className="table-scroll">
        <table className="table" aria-label="Schedules">
          <thead>
            <tr>
              <th scope="col">Schedule</th>
              <th scope="col">Suite</th>
              <th scope="col">Where</th>
              <th scope="col">When</th>
              <th scope="col">Next</th>
              <th scope="col">Last firing</th>
              <th scope="col">Enabled</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {schedules.data.data.map((s) => (
              <Fragment key={s.id}>
                <tr>
                  <th scope="row">
                    {s.title}
                    <div className="small muted">by {s.created_by ?? 'nobody now'}</div>
                  </th>
                  <td>{s.suite_title ?? <span className="badge badge-bad">suite {s.suite} deleted</span>}</td>
                  <td>{targetText(s, (id) => names.get(id))}</td>
                  <td>{recurrenceText(s)}</td>
                  <td>{s.enabled ? formatDateTime(s.next_fire_at) : '—'}</td>
                  <td>
                    {s.last_firing ? (
                      <>
                        <span className={OUTCOME_BADGE[s.last_firing.outcome]}>{s.last_firing.outcome}</span>{' '}
                        <span className="small muted">{formatDateTime(s.last_firing.fired_at)}</span>
                      </>
                    ) : (
                      <span className="muted">never</span>
                    )}
                  </td>
                  <td>
                    {mine(s) ? (
                      <label className="check">
                        <input
                          type="checkbox"
                          checked={s.enabled}
                          disabled={m.update.isPending}
                          aria-label={`${s.title} enabled`}
                          onChange={(e) => m.update.mutate({ id: s.id, body: bodyOf(s, { enabled: e.target.checked }) })}
                        />
                      </label>
                    ) : s.enabled ? (
                      'yes'
                    ) : (
                      'no'
                    )}
                  </td>
                  <td className="row-actions">
                    <button type="button" className="button button-small" aria-expanded={open === s.id} onClick={() => setOpen(open === s.id ? null : s.id)}>
                      {open === s.id ? 'Hide history' : 'History'}
                    </button>
                    {can.operate ? (
                      <button
                        type="button"
                        className="button button-small"
                        disabled={m.runNow.isPending}
                        onClick={() =>
                          m.runNow.mutate(s.id, {
                            onSuccess: (f) => {
                              setNotice(`${s.title}: ${f.outcome}${f.suite_run_id ? ` (suite run #${f.suite_run_id})` : ''}.`);
                              setOpen(s.id);
                            },
                          })
                        }
                      >
                        Run now
                      </button>
                    ) : null}
                    {mine(s) ? (
                      <button
                        type="button"
                        className="button button-small"
                        onClick={() => {
                          setCreating(false);
                          setEditing(s);
                        }}
                      >
                        Edit
                      </button>
                    ) : null}
                    {mine(s) ? (
                      <button
                        type="button"
                        className="button button-small button-danger"
                        disabled={m.remove.isPending}
                        onClick={() => {
                          if (window.confirm(`Delete the schedule “${s.title}” and its history? Its suite runs stay.`)) m.remove.mutate(s.id);
                        }}
                      >
                        Delete
                      </button>
                    ) : null}
                  </td>
                </tr>
                {open === s.id ? (
                  <tr>
                    <td colSpan={8}>
                      <ScheduleHistory scheduleId={s.id} title={s.title} runPath={suiteRunPath} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
    );

  return (
    <>
      <PageHeader title="Schedules">
        {can.operate && !creating ? (
          <button
            type="button"
            className="button button-primary"
            onClick={() => {
              setEditing(null);
              setCreating(true);
            }}
          >
            Create schedule
          </button>
        ) : null}
      </PageHeader>
      {creating ? (
        <ScheduleForm
          onSaved={(s) => {
            setCreating(false);
            setNotice(`Created “${s.title}”: next ${formatDateTime(s.next_fire_at)}.`);
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      {editing ? (
        <ScheduleForm
          key={editing.id}
          editing={editing}
          onSaved={(s) => {
            setEditing(null);
            setNotice(`Saved “${s.title}”${s.enabled ? `: next ${formatDateTime(s.next_fire_at)}` : ' (off)'}.`);
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}
      {notice ? (
        <p className="state state-ok" role="status">
          {notice}
        </p>
      ) : null}
      {failed ? (
        <p className="field-error" role="alert">
          {errorMessage(failed)}
        </p>
      ) : null}
      {body}
      <p className="help">
        Times are shown in your time zone; cron expressions are in UTC. Suite runs a schedule started are also under <Link to="/suites">Suites</Link>.
      </p>
    </>
  );
}
