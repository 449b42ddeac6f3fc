// The Suites page: the built-in and saved suites (features/suites) with the hosts (features/hosts) and the
// experiments' titles, parameter schemas and duration terms (features/jobs), and the recent suite runs. The editor
// is the same page in another mode, in the URL so that it survives a reload: ?new (a new suite), ?new&from=ID (a
// copy of ID to edit), ?edit=ID (a saved suite).
import { useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, Loading } from '../../components/Status';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { useExperiments } from '../../features/jobs/api/get-experiments';
import { useSuites, type Suite } from '../../features/suites/api/suites';
import { ImportSuite } from '../../features/suites/components/ImportSuite';
import { RecentSuiteRuns } from '../../features/suites/components/RecentSuiteRuns';
import { SuiteEditor } from '../../features/suites/components/SuiteEditor';
import { SuitesView } from '../../features/suites/components/SuitesView';
import { draftFromSuite, newItem } from '../../features/suites/lib/editor';
import { useMe } from '../../lib/auth/me';
import { abilities } from '../../lib/auth/roles';
import type { Experiment } from '../../lib/api/types';
import { readGpus } from '../../features/hosts/lib/inventory';
import { RoleGate } from '../RoleGate';

export const suiteRunPath = (id: number | string) => `/suite-runs/${id}`;

const hasGpu = (inventory: Record<string, unknown> | undefined) => (readGpus(inventory) ?? 0) > 0;

export function SuitesRoute() {
  const suites = useSuites();
  const hosts = useHosts();
  const experiments = useExperiments();
  const me = useMe();
  const can = abilities(me.data?.role);
  const navigate = useNavigate();
  const [search] = useSearchParams();
  // What the last save or import made: said once, above the cards.
  const [notice, setNotice] = useState<string | null>(null);
  const editing = search.has('new') || search.has('edit');

  const done = (what: string) => (s: Suite) => {
    setNotice(`${what} “${s.title}” (${s.id}).`);
    void navigate('/suites');
  };

  let body;
  if (suites.isPending || hosts.isPending || experiments.isPending) body = <Loading label="Loading suites and hosts…" />;
  else if (suites.isError) body = <ErrorState error={suites.error} title="Could not load suites" onRetry={() => void suites.refetch()} />;
  else if (hosts.isError) body = <ErrorState error={hosts.error} title="Could not load hosts" onRetry={() => void hosts.refetch()} />;
  else if (experiments.isError)
    body = <ErrorState error={experiments.error} title="Could not load experiments" onRetry={() => void experiments.refetch()} />;
  else if (editing)
    body = (
      <RoleGate needed="operator" what="save suites">
        <EditorFor
          suites={suites.data.data}
          experiments={experiments.data.data}
          editId={search.get('edit')}
          fromId={search.get('from')}
          onSaved={done('Saved')}
          onCancel={() => void navigate('/suites')}
        />
      </RoleGate>
    );
  else
    body = (
      <>
        {notice ? (
          <p className="state state-ok" role="status">
            {notice}
          </p>
        ) : null}
        <SuitesView
          suites={suites.data.data}
          experiments={experiments.data.data}
          // A revoked host runs nothing: it is not offered.
          hosts={hosts.data.data
            .filter((h) => !h.revoked)
            .map((h) => ({ id: h.id, name: h.name, online: h.online, hasGpu: hasGpu(h.inventory) }))}
          canOperate={can.operate}
          canEdit={(s) => !s.builtin && can.operate && (can.administer || s.created_by === me.data?.name)}
          onStarted={(sr) => void navigate(suiteRunPath(sr.id))}
          onCopy={(s) => void navigate(`/suites?new&from=${encodeURIComponent(s.id)}`)}
          onEdit={(s) => void navigate(`/suites?edit=${encodeURIComponent(s.id)}`)}
        />
      </>
    );

  const title = !editing ? 'Suites' : search.has('edit') ? 'Edit suite' : 'New suite';
  return (
    <>
      <PageHeader title={title}>
        {!editing && can.operate ? (
          <>
            <button type="button" className="button button-primary" onClick={() => void navigate('/suites?new')}>
              New suite
            </button>
            <ImportSuite onImported={done('Imported')} />
          </>
        ) : null}
      </PageHeader>
      {body}
      {editing ? null : (
        <section aria-labelledby="recent-suite-runs">
          <h2 id="recent-suite-runs">Recent suite runs</h2>
          <RecentSuiteRuns runPath={suiteRunPath} />
        </section>
      )}
    </>
  );
}

/** The editor with its starting draft: the saved suite to change, a copy of another, or one item of the first
 * experiment. */
function EditorFor({
  suites,
  experiments,
  editId,
  fromId,
  onSaved,
  onCancel,
}: {
  suites: readonly Suite[];
  experiments: readonly Experiment[];
  editId: string | null;
  fromId: string | null;
  onSaved: (s: Suite) => void;
  onCancel: () => void;
}) {
  const source = suites.find((s) => s.id === (editId ?? fromId));
  if ((editId || fromId) && !source)
    return (
      <div className="state state-error" role="alert">
        <p>
          <strong>There is no suite “{editId ?? fromId}”.</strong> It may have been deleted; go back to Suites to pick another.
        </p>
      </div>
    );
  if (editId && source?.builtin)
    return (
      <div className="state state-error" role="alert">
        <p>
          <strong>{source.title} is built in and cannot be changed.</strong> Use Save as new suite on its card to edit a copy.
        </p>
      </div>
    );
  const first = experiments[0];
  const initial = source
    ? draftFromSuite(source, experiments, editId ? '' : ' (copy)')
    : { title: '', description: '', items: first ? [newItem(first)] : [] };
  return <SuiteEditor key={editId ?? fromId ?? 'new'} experiments={experiments} initial={initial} suiteId={editId ?? undefined} onSaved={onSaved} onCancel={onCancel} />;
}
