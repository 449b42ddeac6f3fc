// The form that creates a schedule, or changes one (its owner or an admin): its title, the suite, where (hosts
// picked, or a label resolved when it fires), when (an interval, or a cron expression in UTC) with the server's next
// three fire times as it is typed.
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { ErrorState, Loading } from '../../../components/Status';
import { errorMessage } from '../../../lib/api/errors';
import { formatDateTime } from '../../../lib/format';
import { useScheduleHosts, useScheduleMutations, usePreview, useScheduleSuites, type PreviewQuery, type Schedule } from '../api/schedules';
import { intervalParts, intervalSeconds, recurrenceText } from '../lib/words';

type Unit = 'minutes' | 'hours' | 'days';

/** The value typed last, once it has stayed for `ms`: the preview asks the server once per pause, not per key. */
function useSettled<T>(value: T, ms = 400): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

function Preview({ query }: { query: PreviewQuery | null }) {
  const p = usePreview(query);
  if (query === null) return <p className="help">Give an interval or a cron expression to see when it fires.</p>;
  if (p.isPending) return <p className="help">Working out the next times…</p>;
  if (p.isError)
    return (
      <p className="field-error" role="alert">
        {errorMessage(p.error)}
      </p>
    );
  return (
    <div className="help" aria-live="polite">
      Next, {recurrenceText({ interval_s: 'interval_s' in query ? query.interval_s : null, cron: 'cron' in query ? query.cron : null })}:
      <ol aria-label="Next fire times">
        {p.data.next.map((t) => (
          <li key={t}>{formatDateTime(t)}</li>
        ))}
      </ol>
    </div>
  );
}

export function ScheduleForm({ editing, onSaved, onCancel }: { editing?: Schedule; onSaved: (s: Schedule) => void; onCancel: () => void }) {
  const suites = useScheduleSuites();
  const hosts = useScheduleHosts();
  const { create, update } = useScheduleMutations();
  const save = editing ? update : create;
  const parts = editing?.interval_s ? intervalParts(editing.interval_s) : { every: '1', unit: 'hours' as Unit };
  const [title, setTitle] = useState(editing?.title ?? '');
  const [suite, setSuite] = useState(editing?.suite ?? 'quick');
  const [target, setTarget] = useState<'hosts' | 'label'>(editing?.label ? 'label' : 'hosts');
  const [hostIds, setHostIds] = useState<number[]>(editing?.host_ids ?? []);
  const [label, setLabel] = useState(editing?.label ?? '');
  const [when, setWhen] = useState<'interval' | 'cron'>(editing?.cron ? 'cron' : 'interval');
  const [every, setEvery] = useState(parts.every);
  const [unit, setUnit] = useState<Unit>(parts.unit);
  const [cron, setCron] = useState(editing?.cron ?? '0 3 * * *');

  const live = useMemo(() => (hosts.data?.data ?? []).filter((h) => !h.revoked), [hosts.data]);
  const labels = useMemo(() => {
    const seen = new Set<string>();
    for (const h of live) for (const [k, v] of Object.entries(h.labels ?? {})) if (typeof v === 'string' && v) seen.add(`${k}=${v}`);
    return [...seen].sort();
  }, [live]);
  const seconds = intervalSeconds(every, unit);
  const query = useSettled<PreviewQuery | null>(
    when === 'interval' ? (seconds === null ? null : { interval_s: seconds }) : cron.trim() ? { cron: cron.trim() } : null,
  );

  if (suites.isPending || hosts.isPending) return <Loading label="Loading suites and hosts…" />;
  if (suites.isError) return <ErrorState error={suites.error} title="Could not load suites" />;
  if (hosts.isError) return <ErrorState error={hosts.error} title="Could not load hosts" />;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const where = target === 'hosts' ? { host_ids: hostIds } : { label: label.trim() };
    const recurrence = when === 'interval' ? { interval_s: seconds ?? 0 } : { cron: cron.trim() };
    const body = { title: title.trim(), suite, enabled: editing?.enabled ?? true, ...where, ...recurrence };
    if (editing) update.mutate({ id: editing.id, body }, { onSuccess: onSaved });
    else create.mutate(body, { onSuccess: onSaved });
  };
  const ready = title.trim() !== '' && (target === 'hosts' ? hostIds.length > 0 : label.includes('=')) && (when === 'cron' || seconds !== null);

  return (
    <form className="card form" onSubmit={submit} aria-label={editing ? `Edit ${editing.title}` : 'New schedule'}>
      <h2 className="card-title">{editing ? `Edit “${editing.title}”` : 'New schedule'}</h2>
      <div className="field">
        <label htmlFor="sch-title">Title</label>
        <input id="sch-title" value={title} maxLength={200} onChange={(e) => setTitle(e.target.value)} required />
      </div>
      <div className="field">
        <label htmlFor="sch-suite">Suite</label>
        <select id="sch-suite" value={suite} onChange={(e) => setSuite(e.target.value)}>
          {suites.data.data.map((s) => (
            <option key={s.id} value={s.id}>
              {s.title} ({s.builtin ? 'built in' : s.id})
            </option>
          ))}
        </select>
      </div>
      <fieldset className="fieldset">
        <legend>Where</legend>
        <label className="check">
          <input type="radio" name="sch-target" checked={target === 'hosts'} onChange={() => setTarget('hosts')} /> These hosts
        </label>
        <label className="check">
          <input type="radio" name="sch-target" checked={target === 'label'} onChange={() => setTarget('label')} /> Every host with a label, when it fires
        </label>
        {target === 'hosts' ? (
          <ul className="host-options" aria-label="Hosts">
            {live.length === 0 ? <li className="muted">No host has registered yet.</li> : null}
            {live.map((h) => (
              <li key={h.id}>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={hostIds.includes(h.id)}
                    onChange={(e) => setHostIds((ids) => (e.target.checked ? [...ids, h.id] : ids.filter((x) => x !== h.id)))}
                  />{' '}
                  {h.name} <span className={`badge ${h.online ? 'badge-ok' : 'badge-muted'}`}>{h.online ? 'online' : 'offline'}</span>
                </label>
              </li>
            ))}
          </ul>
        ) : (
          <div className="field">
            <label htmlFor="sch-label">Label (key=value)</label>
            <input id="sch-label" list="sch-labels" value={label} maxLength={130} placeholder="region=eu-west-1" onChange={(e) => setLabel(e.target.value)} />
            <datalist id="sch-labels">
              {labels.map((l) => (
                <option key={l} value={l} />
              ))}
            </datalist>
          </div>
        )}
        <p className="help">A host that is busy (a run queued or running) or offline when it fires is left out, and the history says so.</p>
      </fieldset>
      <fieldset className="fieldset">
        <legend>When</legend>
        <label className="check">
          <input type="radio" name="sch-when" checked={when === 'interval'} onChange={() => setWhen('interval')} /> Every…
        </label>
        <label className="check">
          <input type="radio" name="sch-when" checked={when === 'cron'} onChange={() => setWhen('cron')} /> Cron expression (UTC)
        </label>
        {when === 'interval' ? (
          <div className="form-row">
            <div className="field">
              <label htmlFor="sch-every">Every</label>
              <input id="sch-every" inputMode="numeric" value={every} onChange={(e) => setEvery(e.target.value)} />
            </div>
            <div className="field">
              <label htmlFor="sch-unit">Unit</label>
              <select id="sch-unit" value={unit} onChange={(e) => setUnit(e.target.value as Unit)}>
                <option value="minutes">minutes</option>
                <option value="hours">hours</option>
                <option value="days">days</option>
              </select>
            </div>
          </div>
        ) : (
          <div className="field">
            <label htmlFor="sch-cron">Cron expression</label>
            <input id="sch-cron" value={cron} maxLength={100} onChange={(e) => setCron(e.target.value)} spellCheck={false} />
            <p className="help">minute hour day-of-month month day-of-week, e.g. “0 3 * * mon” (Mondays 03:00 UTC).</p>
          </div>
        )}
        <p className="help">From 5 minutes to 90 days. After a downtime a schedule fires once, not once per missed time.</p>
        <Preview query={query} />
      </fieldset>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={!ready || save.isPending}>
          {save.isPending ? 'Saving…' : editing ? 'Save changes' : 'Create schedule'}
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {save.error ? (
        <p className="field-error" role="alert">
          {errorMessage(save.error)}
        </p>
      ) : null}
    </form>
  );
}
