// The hosts page at fleet size (issue 32): one row per host, searched, filtered, sorted and paged by the server
// (GET /api/hosts); a host's name opens its card. The table's state lives in the URL, so a filtered view is a link.
import { useEffect, useId, useState } from 'react';
import type { HostPublic } from '../../../lib/api/types';
import { formatBytes, formatDateTime, formatRelative } from '../../../lib/format';
import { VerdictBadge, ageText } from '../../../components/VerdictBadge';
import type { HostListQuery, HostSort } from '../api/get-hosts';
import { readCpu, readMemoryBytes } from '../lib/inventory';

export const PAGE_SIZE = 50;

export interface HostTableState {
  q: string;
  status: string;
  cpu: string;
  label: string;
  sort: HostSort;
  order: 'asc' | 'desc';
  page: number;
}

const SORTS: readonly HostSort[] = ['id', 'name', 'status', 'cpu', 'cores', 'memory', 'last_seen', 'registered'];

/** The table's state from the page's URL search parameters (anything unknown falls back to the default). */
export function readTableState(params: URLSearchParams): HostTableState {
  const sort = params.get('sort') as HostSort | null;
  const page = Number(params.get('page') ?? '1');
  return {
    q: params.get('q') ?? '',
    status: params.get('status') ?? '',
    cpu: params.get('cpu') ?? '',
    label: params.get('label') ?? '',
    sort: sort && SORTS.includes(sort) ? sort : 'name',
    order: params.get('order') === 'desc' ? 'desc' : 'asc',
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

/** What GET /api/hosts is asked for this state. */
export function toQuery(s: HostTableState): HostListQuery {
  const query: HostListQuery = { sort: s.sort, order: s.order, limit: PAGE_SIZE, offset: (s.page - 1) * PAGE_SIZE };
  if (s.q.trim()) query.q = s.q.trim();
  if (s.status === 'online' || s.status === 'offline' || s.status === 'revoked') query.status = s.status;
  if (s.cpu) query.cpu = s.cpu;
  if (s.label) query.label = [s.label];
  return query;
}

export interface Facets {
  count: number;
  statuses: Record<string, number>;
  cpus: { value: string; count: number }[];
  labels: { key: string; value: string; count: number }[];
}

interface ToolbarProps {
  state: HostTableState;
  facets: Facets | undefined;
  onChange: (patch: Partial<HostTableState>) => void;
}

/** Search (sent when typing pauses), status, CPU and label filters. */
export function HostsToolbar({ state, facets, onChange }: ToolbarProps) {
  const id = useId();
  const [q, setQ] = useState(state.q);
  const [shownQ, setShownQ] = useState(state.q);
  if (shownQ !== state.q) {
    // the URL changed under the box (back, a link): show its search
    setShownQ(state.q);
    setQ(state.q);
  }
  useEffect(() => {
    if (q === state.q) return undefined;
    const t = window.setTimeout(() => onChange({ q, page: 1 }), 300);
    return () => window.clearTimeout(t);
  }, [q, state.q, onChange]);
  const n = (v: number | undefined) => (v === undefined ? '' : ` (${v.toLocaleString('en-US')})`);
  return (
    <form className="filters hosts-toolbar" role="search" aria-label="Find hosts" onSubmit={(e) => { e.preventDefault(); onChange({ q, page: 1 }); }}>
      <div className="field">
        <label htmlFor={`${id}-q`}>Search</label>
        <input id={`${id}-q`} type="search" value={q} placeholder="name, host name, CPU, label, address" onChange={(e) => setQ(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-status`}>Status</label>
        <select id={`${id}-status`} value={state.status} onChange={(e) => onChange({ status: e.target.value, page: 1 })}>
          <option value="">any{n(facets?.count)}</option>
          {(['online', 'offline', 'revoked'] as const).map((s) => (
            <option key={s} value={s}>
              {s}
              {n(facets?.statuses[s])}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-cpu`}>CPU</label>
        <select id={`${id}-cpu`} value={state.cpu} onChange={(e) => onChange({ cpu: e.target.value, page: 1 })}>
          <option value="">any</option>
          {state.cpu && !facets?.cpus.some((c) => c.value === state.cpu) ? <option value={state.cpu}>{state.cpu}</option> : null}
          {facets?.cpus.map((c) => (
            <option key={c.value} value={c.value}>
              {c.value}
              {n(c.count)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-label`}>Label</label>
        <select id={`${id}-label`} value={state.label} onChange={(e) => onChange({ label: e.target.value, page: 1 })}>
          <option value="">any</option>
          {state.label && !facets?.labels.some((l) => `${l.key}=${l.value}` === state.label) ? <option value={state.label}>{state.label}</option> : null}
          {facets?.labels.map((l) => (
            <option key={`${l.key}=${l.value}`} value={`${l.key}=${l.value}`}>
              {l.key}: {l.value}
              {n(l.count)}
            </option>
          ))}
        </select>
      </div>
    </form>
  );
}

const COLUMNS: { key: HostSort | null; label: string; num?: boolean }[] = [
  { key: 'name', label: 'Name' },
  { key: 'status', label: 'Status' },
  { key: 'cpu', label: 'CPU' },
  { key: 'cores', label: 'Cores', num: true },
  { key: 'memory', label: 'Memory', num: true },
  { key: null, label: 'Labels' },
  { key: null, label: 'Health check' },
  { key: 'last_seen', label: 'Last seen' },
];

function statusOf(h: HostPublic): { text: string; badge: string } {
  if (h.revoked) return { text: 'revoked', badge: 'badge-bad' };
  return h.online ? { text: 'online', badge: 'badge-ok' } : { text: 'offline', badge: 'badge-muted' };
}

interface TableProps {
  hosts: HostPublic[];
  state: HostTableState;
  now: number;
  selected: number | null;
  onSort: (key: HostSort) => void;
  onOpen: (id: number) => void;
}

export function HostsTable({ hosts, state, now, selected, onSort, onOpen }: TableProps) {
  return (
    <div className="table-scroll">
      <table className="table hosts-table">
        <caption className="visually-hidden">Hosts</caption>
        <thead>
          <tr>
            {COLUMNS.map((c) => {
              const active = c.key !== null && state.sort === c.key;
              return (
                <th
                  key={c.label}
                  scope="col"
                  className={c.num ? 'num' : undefined}
                  aria-sort={active ? (state.order === 'asc' ? 'ascending' : 'descending') : undefined}
                >
                  {c.key === null ? (
                    c.label
                  ) : (
                    <button type="button" className="sort-button" onClick={() => onSort(c.key as HostSort)}>
                      {c.label}
                      <span aria-hidden="true">{active ? (state.order === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                    </button>
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {hosts.map((h) => {
            const cpu = readCpu(h.inventory);
            const s = statusOf(h);
            const labels = Object.entries(h.labels).filter(([, v]) => v !== null && v !== '');
            return (
              <tr key={h.id} aria-selected={selected === h.id} className={selected === h.id ? 'row-selected' : undefined}>
                <th scope="row">
                  <button type="button" className="link-button" onClick={() => onOpen(h.id)} aria-label={`Open ${h.name}`}>
                    {h.name}
                  </button>
                  <div className="muted small">{h.hostname}</div>
                </th>
                <td>
                  <span className={`badge ${s.badge}`}>{s.text}</span>
                  {h.version_mismatch ? (
                    <span className="badge badge-warn" title={`runner ${h.runner_version}, server ${h.server_version}`}>
                      old runner
                    </span>
                  ) : null}
                </td>
                <td>{cpu.model ?? '—'}</td>
                <td className="num">{cpu.cores ?? '—'}</td>
                <td className="num">{formatBytes(readMemoryBytes(h.inventory))}</td>
                <td className="small">{labels.length ? labels.map(([k, v]) => `${k}: ${String(v)}`).join(' · ') : '—'}</td>
                <td>
                  {h.health?.[0] ? (
                    <span title={`${h.health[0].suite}, check ${h.health[0].check_id}, ${h.health[0].at}`}>
                      <VerdictBadge verdict={h.health[0].verdict} />{' '}
                      <span className="small muted">{ageText(h.health[0].age_s)} ago</span>
                    </span>
                  ) : (
                    <span className="muted small">not checked</span>
                  )}
                </td>
                <td>
                  <time dateTime={h.last_seen_at ?? undefined} title={formatDateTime(h.last_seen_at)}>
                    {formatRelative(h.last_seen_at, now)}
                  </time>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

interface PagerProps {
  page: number;
  count: number;
  shown: number;
  /** The rows shown are still the previous page's (the requested one is on its way): say so, not its numbers. */
  loading?: boolean;
  onPage: (page: number) => void;
}

export function Pager({ page, count, shown, loading = false, onPage }: PagerProps) {
  const pages = Math.max(1, Math.ceil(count / PAGE_SIZE));
  const first = count === 0 ? 0 : (page - 1) * PAGE_SIZE + 1;
  return (
    <nav className="pager" aria-label="Host pages">
      <p role="status" className="muted small">
        {loading
          ? `Loading page ${page}…`
          : count === 0
          ? 'No host matches.'
          : `Hosts ${first.toLocaleString('en-US')}–${(first + shown - 1).toLocaleString('en-US')} of ${count.toLocaleString('en-US')} · page ${page} of ${pages}`}
      </p>
      <button type="button" className="button button-small" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <button type="button" className="button button-small" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next page
      </button>
    </nav>
  );
}
