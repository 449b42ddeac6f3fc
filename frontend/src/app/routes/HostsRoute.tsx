import { useCallback, useEffect, useRef } from 'react';
import { Link, useSearchParams } from 'react-router';
import { Empty, ErrorState, Loading } from '../../components/Status';
import { PageHeader } from '../../components/PageHeader';
import { paths } from '../../config/paths';
import { useHost, useHostFacets, useHostPage, type HostSort } from '../../features/hosts/api/get-hosts';
import { AddHost } from '../../features/hosts/components/AddHost';
import { AddHosts } from '../../features/hosts/components/AddHosts';
import { HostCard } from '../../features/hosts/components/HostCard';
import { HostsTable, HostsToolbar, Pager, readTableState, toQuery, type HostTableState } from '../../features/hosts/components/HostsTable';
import { useAbilities } from '../../lib/auth/me';

export function HostsRoute() {
  const [params, setParams] = useSearchParams();
  const state = readTableState(params);
  const hosts = useHostPage(toQuery(state));
  const facets = useHostFacets();
  const can = useAbilities();
  const selectedParam = Number(params.get('host'));
  const selected = Number.isInteger(selectedParam) && selectedParam > 0 ? selectedParam : null;
  const inPage = hosts.data?.data.find((h) => h.id === selected);
  const one = useHost(selected !== null && !inPage ? selected : null);
  const card = inPage ?? one.data;
  const cardRef = useRef<HTMLDivElement>(null);

  const change = useCallback(
    (patch: Partial<HostTableState> & { host?: number | null }) => {
      setParams(
        (prev) => {
          const next = new URLSearchParams(prev);
          for (const [k, v] of Object.entries(patch)) {
            const dflt = (k === 'sort' && v === 'name') || (k === 'order' && v === 'asc') || (k === 'page' && v === 1);
            if (v === '' || v === null || v === undefined || dflt) next.delete(k);
            else next.set(k, String(v));
          }
          return next;
        },
        { replace: true },
      );
    },
    [setParams],
  );
  const sortBy = (key: HostSort) =>
    change({ sort: key, order: state.sort === key && state.order === 'asc' ? 'desc' : 'asc', page: 1 });

  useEffect(() => {
    if (card) cardRef.current?.scrollIntoView?.({ block: 'nearest' });
  }, [card?.id]); // eslint-disable-line react-hooks/exhaustive-deps

  const none = facets.data?.count === 0 && !hosts.data?.count;
  return (
    <>
      <PageHeader title="Hosts">
        {can.administer ? <AddHost /> : null}
        {can.administer ? <AddHosts /> : null}
        {can.operate ? (
          <Link className="button button-primary" to={paths.newJob()}>
            New job
          </Link>
        ) : null}
      </PageHeader>
      {hosts.isPending ? (
        <Loading label="Loading hosts…" />
      ) : hosts.isError ? (
        <ErrorState error={hosts.error} title="Could not load hosts" onRetry={() => void hosts.refetch()} />
      ) : none ? (
        <Empty>
          <p>No host has registered yet.</p>
          <p className="muted small">
            {can.administer
              ? 'Press “Add host” for a command to paste on the target host (“Add hosts” for a fleet); it appears here within seconds.'
              : 'An admin adds hosts (Hosts → Add host); they appear here within seconds.'}
          </p>
        </Empty>
      ) : (
        <>
          <HostsToolbar state={state} facets={facets.data} onChange={change} />
          {card ? (
            <div ref={cardRef} className="host-detail" role="region" aria-label={`Host ${card.name}`}>
              <div className="host-detail-actions">
                <button type="button" className="button button-small button-ghost" onClick={() => change({ host: null })}>
                  Close {card.name}
                </button>
              </div>
              <HostCard host={card} now={inPage ? hosts.dataUpdatedAt : one.dataUpdatedAt} can={can} />
            </div>
          ) : selected !== null && one.isError ? (
            <ErrorState error={one.error} title={`Could not load host ${selected}`} onRetry={() => void one.refetch()} />
          ) : null}
          <Pager page={state.page} count={hosts.data.count} shown={hosts.data.data.length} loading={hosts.isPlaceholderData} onPage={(page) => change({ page })} />
          {hosts.data.data.length ? (
            <HostsTable
              hosts={hosts.data.data}
              state={state}
              now={hosts.dataUpdatedAt}
              selected={selected}
              onSort={sortBy}
              onOpen={(id) => change({ host: id === selected ? null : id })}
            />
          ) : null}
        </>
      )}
    </>
  );
}
