import { useSearchParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { Empty, ErrorState, Loading } from '../../components/Status';
import { useAudit } from '../../features/audit/api/get-audit';
import { AuditTable } from '../../features/audit/components/AuditTable';

const PAGE = 50;

export function AuditRoute() {
  const [search, setSearch] = useSearchParams();
  const page = Math.max(1, Number(search.get('page')) || 1);
  const audit = useAudit({ limit: PAGE, offset: (page - 1) * PAGE });
  const pages = audit.data ? Math.max(1, Math.ceil(audit.data.count / PAGE)) : 1;
  const go = (p: number) => setSearch(p > 1 ? { page: String(p) } : {});

  return (
    <>
      <PageHeader title="Audit log" />
      <p className="muted">Every job created, run cancelled, label edited, peak entered or cleared, user changed, token issued, and host revoked, rotated or deleted, with who did it.</p>
      {audit.isPending ? (
        <Loading label="Loading the audit log…" />
      ) : audit.isError ? (
        <ErrorState error={audit.error} title="Could not load the audit log" onRetry={() => void audit.refetch()} />
      ) : audit.data.data.length === 0 ? (
        <Empty>
          <p>Nothing recorded yet.</p>
        </Empty>
      ) : (
        <section className="card" aria-label="Audit events">
          <AuditTable events={audit.data.data} />
          <nav className="pager" aria-label="Audit pages">
            <button type="button" className="button button-small" onClick={() => go(page - 1)} disabled={page <= 1}>
              Newer
            </button>
            <span className="small muted">
              Page {page} of {pages} · {audit.data.count} events
            </span>
            <button type="button" className="button button-small" onClick={() => go(page + 1)} disabled={page >= pages}>
              Older
            </button>
          </nav>
        </section>
      )}
    </>
  );
}
