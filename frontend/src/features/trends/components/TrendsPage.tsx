// Trends: one metric of a host or a label over time, with its CI band, the changes the detector
// found (regressions and improvements), thresholds and the events they raised. Scope and metric
// live in the URL (?host=3&metric=cpu|fp64|2|), so a trend can be linked.
import { useMemo, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { PageHeader } from '../../../components/PageHeader';
import { Empty, ErrorState, Loading } from '../../../components/Status';
import { errorMessage } from '../../../lib/api/errors';
import { useAbilities } from '../../../lib/auth/me';
import { formatDateTime, formatNumber } from '../../../lib/format';
import {
  useCreateThreshold, useDeleteThreshold, useMetrics, useNotifications, useSeries, useTrendHosts, useUpdateNotifications,
  type SeriesPublic, type SeriesQuery,
} from '../api/trends';
import {
  LABEL_KEYS, changeText, decodeMetric, encodeMetric, metricLabel, readScope, runsWords, scopeQuery, thresholdText, writeScope,
  type MetricKey, type NamingExperiment, type Scope,
} from '../lib/series';
import { TrendChart } from './TrendChart';

function ScopePicker({ scope, onChange }: { scope: Scope | null; onChange: (s: Scope) => void }) {
  const hosts = useTrendHosts();
  const list = useMemo(() => hosts.data?.data ?? [], [hosts.data]);
  const labels = useMemo(() => {
    const seen = new Set<string>();
    for (const h of list) {
      const l = (h.labels ?? {}) as Record<string, unknown>;
      for (const k of LABEL_KEYS) if (typeof l[k] === 'string' && l[k]) seen.add(`${k}:${l[k] as string}`);
    }
    return [...seen].sort();
  }, [list]);
  const value = scope ? ('host' in scope ? `host:${scope.host}` : `label:${scope.label}:${scope.value}`) : '';
  return (
    <div className="field">
      <label htmlFor="trend-scope">Host or label</label>
      <select
        id="trend-scope"
        value={value}
        onChange={(e) => {
          const v = e.target.value;
          if (v.startsWith('host:')) onChange({ host: Number(v.slice(5)) });
          else if (v.startsWith('label:')) {
            const rest = v.slice(6);
            const i = rest.indexOf(':');
            onChange({ label: rest.slice(0, i) as Scope extends { label: infer L } ? L : never, value: rest.slice(i + 1) });
          }
        }}
      >
        <option value="">choose…</option>
        <optgroup label="Hosts">
          {list.map((h) => (
            <option key={h.id} value={`host:${h.id}`}>
              {h.name}
            </option>
          ))}
        </optgroup>
        {labels.length ? (
          <optgroup label="Labels (every host that had it when it ran)">
            {labels.map((l) => (
              <option key={l} value={`label:${l}`}>
                {l.replace(':', ' = ')}
              </option>
            ))}
          </optgroup>
        ) : null}
      </select>
    </div>
  );
}

function ThresholdForm({ series, scope }: { series: SeriesPublic; scope: Scope }) {
  const create = useCreateThreshold();
  const [kind, setKind] = useState<'below' | 'above' | 'drop_pct'>('below');
  const [value, setValue] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const m = series.metric;
    const where = 'host' in scope ? { host_id: scope.host } : { label: `${scope.label}=${scope.value}` };
    create.mutate(
      { ...where, experiment: m.experiment as never, op: m.op, threads: m.threads, block_bytes: m.block_bytes, kind, value: Number(value) },
      { onSuccess: () => setValue('') },
    );
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Add a threshold">
      <div className="field">
        <label htmlFor="th-kind">Flag when</label>
        <select id="th-kind" value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
          <option value="below">below a value</option>
          <option value="above">above a value</option>
          <option value="drop_pct">worse by more than Y %</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor="th-value">{kind === 'drop_pct' ? 'Y (%)' : `Value (${series.unit})`}</label>
        <input id="th-value" inputMode="decimal" value={value} onChange={(e) => setValue(e.target.value)} required />
      </div>
      <button type="submit" className="button" disabled={create.isPending || value === '' || !Number.isFinite(Number(value))}>
        Add threshold
      </button>
      {create.error ? <p className="field-error" role="alert">{errorMessage(create.error)}</p> : null}
    </form>
  );
}

function Notifications() {
  const n = useNotifications(true);
  const update = useUpdateNotifications();
  const [url, setUrl] = useState<string | null>(null);
  const [mail, setMail] = useState<string | null>(null);
  if (n.isPending) return <Loading />;
  if (n.error) return <ErrorState error={n.error} />;
  const cfg = n.data;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    update.mutate({ webhook_url: (url ?? cfg.webhook_url ?? '') || null, email_to: (mail ?? cfg.email_to ?? '') || null });
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Notifications">
      <h2 className="card-title">Notifications (admin)</h2>
      <div className="field">
        <label htmlFor="hook-url">Webhook URL (POSTed a JSON event)</label>
        <input id="hook-url" value={url ?? cfg.webhook_url ?? ''} onChange={(e) => setUrl(e.target.value)} placeholder="https://…" />
        <p className="help">
          {cfg.allowed_hosts.length ? `Allowed hosts: ${cfg.allowed_hosts.join(', ')}.` : 'Public addresses only.'} Never link-local
          or cloud metadata addresses.
        </p>
      </div>
      <div className="field">
        <label htmlFor="mail-to">E-mail to</label>
        <input id="mail-to" value={mail ?? cfg.email_to ?? ''} onChange={(e) => setMail(e.target.value)} />
        {cfg.email_note ? <p className="help">{cfg.email_note}</p> : null}
      </div>
      <button type="submit" className="button" disabled={update.isPending}>
        Save
      </button>
      {update.error ? <p className="field-error" role="alert">{errorMessage(update.error)}</p> : null}
    </form>
  );
}

function SeriesView({ series, scope, experiments }: { series: SeriesPublic; scope: Scope; experiments?: readonly NamingExperiment[] }) {
  const can = useAbilities();
  const remove = useDeleteThreshold();
  const title = metricLabel(series.metric as MetricKey, experiments);
  const left = series.points.filter((p) => !p.used);
  return (
    <>
      <section className="card" aria-label="Trend">
        <h2 className="card-title">
          {title} ({series.unit}; {series.lower_is_better ? 'lower' : 'higher'} is better)
        </h2>
        {series.points.length ? <TrendChart series={series} title={title} /> : <Empty>No finished run has this metric here yet.</Empty>}
        <p className="help">
          {runsWords(series.points.length)}{series.has_more ? ' (the newest; older ones exist)' : ''}; {series.excluded} left out of the
          detection because their verdict is not valid. Detector: {series.method.name}; newest {series.method.test_window} runs
          against up to {series.method.baseline_max} before them, p ≤ {series.method.alpha}, effect ≥{' '}
          {(series.method.min_effect * 100).toFixed(0)} % (<code>{series.method.doc}</code>).
        </p>
      </section>
      <section className="card" aria-label="Changes">
        <h2 className="card-title">Changes found</h2>
        {series.changes.length ? (
          <ul>
            {series.changes.map((c) => (
              <li key={c.run_id} className={c.kind === 'regression' ? 'text-bad' : undefined}>
                {formatDateTime(c.at)}: {changeText(c, series.unit)} from <Link to={`/runs/${c.run_id}`}>run {c.run_id}</Link>
              </li>
            ))}
          </ul>
        ) : (
          <p>None in these runs.</p>
        )}
      </section>
      {left.length ? (
        <section className="card" aria-label="Runs left out">
          <h2 className="card-title">Shown, not judged</h2>
          <div className="table-scroll">
            <table className="table">
              <thead>
                <tr>
                  <th>run</th>
                  <th>finished</th>
                  <th className="num">mean</th>
                  <th>why left out</th>
                </tr>
              </thead>
              <tbody>
                {left.map((p) => (
                  <tr key={p.run_id}>
                    <td>
                      <Link to={`/runs/${p.run_id}`}>{p.run_id}</Link>
                    </td>
                    <td>{formatDateTime(p.at)}</td>
                    <td className="num">{formatNumber(p.mean)}</td>
                    <td>{p.excluded_reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}
      <section className="card" aria-label="Thresholds">
        <h2 className="card-title">Thresholds</h2>
        {series.thresholds.length ? (
          <ul>
            {series.thresholds.map((t) => (
              <li key={t.id}>
                {thresholdText(t, series.unit)} (set by {t.created_by ?? '?'}){' '}
                {can.operate ? (
                  <button type="button" className="button button-small" onClick={() => remove.mutate(t.id)} aria-label={`Delete threshold ${t.id}`}>
                    Delete
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
        ) : (
          <p>No threshold on this metric here.</p>
        )}
        {can.operate ? <ThresholdForm series={series} scope={scope} /> : null}
      </section>
      <section className="card" aria-label="Events">
        <h2 className="card-title">Events</h2>
        {series.events.length ? (
          <ul>
            {series.events.map((e) => (
              <li key={e.id}>
                <span className={`badge ${e.kind === 'improvement' ? 'badge-ok' : 'badge-bad'}`}>{e.kind}</span> {formatDateTime(e.at)},{' '}
                <Link to={`/runs/${e.run_id}`}>run {e.run_id}</Link>: {e.text} — webhook {e.webhook_status}
                {e.webhook_detail ? ` (${e.webhook_detail})` : ''}, e-mail {e.email_status}
                {e.email_detail ? ` (${e.email_detail})` : ''}
              </li>
            ))}
          </ul>
        ) : (
          <p>No events yet.</p>
        )}
      </section>
    </>
  );
}

export function TrendsPage({ experiments }: { experiments?: readonly NamingExperiment[] }) {
  const [search, setSearch] = useSearchParams();
  const can = useAbilities();
  const scope = readScope(search);
  const metric = decodeMetric(search.get('metric'));
  const metrics = useMetrics(scope ? scopeQuery(scope) : null);
  const query: SeriesQuery | null =
    scope && metric
      ? { ...scopeQuery(scope), experiment: metric.experiment as SeriesQuery['experiment'], threads: metric.threads,
          ...(metric.op ? { op: metric.op } : {}), ...(metric.block_bytes ? { block_bytes: metric.block_bytes } : {}) }
      : null;
  const series = useSeries(query);

  const setScope = (s: Scope) => setSearch(new URLSearchParams(writeScope(s)));
  const setMetric = (m: string) => {
    const next = new URLSearchParams(search);
    next.set('metric', m);
    setSearch(next);
  };

  return (
    <>
      <PageHeader title="Trends" />
      <div className="filters">
        <ScopePicker scope={scope} onChange={setScope} />
        <div className="field">
          <label htmlFor="trend-metric">Metric</label>
          <select id="trend-metric" value={metric ? encodeMetric(metric) : ''} onChange={(e) => setMetric(e.target.value)} disabled={!scope}>
            <option value="">choose…</option>
            {(metrics.data?.data ?? []).map((m) => (
              <option key={encodeMetric(m)} value={encodeMetric(m)}>
                {metricLabel(m, experiments)} ({m.unit}, {runsWords(m.points)})
              </option>
            ))}
          </select>
        </div>
      </div>
      {metrics.error ? <ErrorState error={metrics.error} /> : null}
      {!scope ? <Empty>Choose a host or a label, then one of its metrics.</Empty> : null}
      {scope && !metric ? <Empty>Choose a metric.</Empty> : null}
      {series.isLoading ? <Loading /> : null}
      {series.error ? <ErrorState error={series.error} onRetry={() => void series.refetch()} /> : null}
      {series.data && scope ? <SeriesView series={series.data} scope={scope} experiments={experiments} /> : null}
      {can.administer ? <Notifications /> : null}
    </>
  );
}
