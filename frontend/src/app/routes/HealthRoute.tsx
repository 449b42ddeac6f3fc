// Health checks and expected bands: start a check on the hosts picked or a label's hosts (operators), each host's verdict with its
// evidence, and the declared bands (operators add and remove; a change is a new version on the server).
import { useState, type FormEvent } from 'react';
import { useHosts } from '../../features/hosts/api/get-hosts';
import { useSuites } from '../../features/suites/api/suites';
import { RoleGate } from '../RoleGate';
import { PageHeader } from '../../components/PageHeader';
import { formatDateTime } from '../../lib/format';
import { Empty, ErrorState, Loading } from '../../components/Status';
import { rangeText, figureText, useBandMutations, useBands, useChecks, useStartCheck } from '../../features/checks/api/checks';
import type { Band, BandIn } from '../../features/checks/api/checks';
import { CheckCard } from '../../features/checks/components/CheckCard';
import { StartCheck } from '../../features/checks/components/StartCheck';

const BUILTIN_SUITES = [
  { id: 'quick', title: 'Quick health check' },
  { id: 'standard', title: 'Standard health check' },
  { id: 'burn-in', title: 'Burn-in' },
];

function StartCheckCard() {
  const start = useStartCheck();
  const hosts = useHosts();
  const suites = useSuites();
  if (hosts.isPending) return <Loading label="Loading hosts…" />;
  if (hosts.isError) return <ErrorState error={hosts.error} title="Could not load hosts" onRetry={() => void hosts.refetch()} />;
  return (
    <StartCheck
      hosts={hosts.data.data.map((h) => ({ id: h.id, name: h.name, online: h.online, labels: h.labels }))}
      suites={suites.data?.data.map((s) => ({ id: s.id, title: s.title })) ?? BUILTIN_SUITES}
      pending={start.isPending}
      error={start.isError ? start.error : null}
      onStart={(body) => start.mutate(body)}
    />
  );
}

const EMPTY_BAND = { kind: '', experiment: 'cpu', op: 'fp64', threads: '1', lower: '', upper: '', unit: '', note: '' };

function BandForm() {
  const { set } = useBandMutations();
  const [b, setB] = useState(EMPTY_BAND);
  const field = (k: keyof typeof EMPTY_BAND, label: string, placeholder = '') => (
    <label>
      {label} <input value={b[k]} placeholder={placeholder} onChange={(e) => setB({ ...b, [k]: e.target.value })} />
    </label>
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const num = (s: string) => (s.trim() === '' ? null : Number(s));
    const body: BandIn = {
      kind: b.kind.trim(), experiment: b.experiment.trim(), op: b.op.trim() || null, threads: Number(b.threads),
      lower: num(b.lower), upper: num(b.upper), of_peak: false, unit: b.unit.trim(), note: b.note,
    };
    set.mutate(body, { onSuccess: () => setB(EMPTY_BAND) });
  };
  return (
    <form className="form-row" onSubmit={submit} aria-label="Declare a band">
      {field('kind', 'Kind', 'cpu=<model>/<cores> or rack=b12')}
      {field('experiment', 'Experiment')}
      {field('op', 'Op')}
      {field('threads', 'Threads')}
      {field('lower', 'Lower')}
      {field('upper', 'Upper')}
      {field('unit', 'Unit')}
      {field('note', 'Note')}
      <button type="submit" className="button" disabled={set.isPending}>
        Save band
      </button>
      {set.isError ? <ErrorState error={set.error} title="The band was not saved" /> : null}
    </form>
  );
}

function BandsTable({ bands }: { bands: Band[] }) {
  const { remove } = useBandMutations();
  return (
    <table className="table">
      <thead>
        <tr>
          <th>Kind</th>
          <th>Figure</th>
          <th>Band</th>
          <th>Version</th>
          <th>Set by</th>
          <th>Note</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {bands.map((b) => (
          <tr key={b.id}>
            <td>{b.kind}</td>
            <td>{figureText(b)}</td>
            <td>
              {rangeText(b)}
              {b.of_peak ? ' of the peak' : ''}
            </td>
            <td>v{b.version}</td>
            <td>
              {b.set_by ?? '—'} <span className="small muted">{formatDateTime(b.set_at)}</span>
            </td>
            <td>{b.note}</td>
            <td>
              <button type="button" className="button button-small" onClick={() => remove.mutate(b)} disabled={remove.isPending}>
                Remove
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function HealthRoute() {
  const checks = useChecks();
  const bands = useBands();
  return (
    <>
      <PageHeader title="Health checks" />
      <p className="muted">
        A suite run on every host picked, each host judged against the expected band of each figure: declared for its kind, else
        learned from its siblings&apos; newest valid figures. DISTURBED means the measurement was not valid: rerun it.
      </p>
      <RoleGate needed="operator" what="start a health check">
        <StartCheckCard />
      </RoleGate>
      {checks.isPending ? (
        <Loading label="Loading health checks…" />
      ) : checks.isError ? (
        <ErrorState error={checks.error} title="Could not load the health checks" onRetry={() => void checks.refetch()} />
      ) : checks.data.data.length === 0 ? (
        <Empty>
          <p>No health check yet.</p>
        </Empty>
      ) : (
        checks.data.data.map((c) => <CheckCard key={c.id} check={c} />)
      )}
      <h2>Expected bands</h2>
      <p className="small muted">
        Export and import the whole set as one file: <code>./hostbench bands export bands.yaml</code>,{' '}
        <code>./hostbench bands import bands.yaml</code>.
      </p>
      <section className="card" aria-label="Expected bands">
        {bands.isPending ? (
          <Loading label="Loading bands…" />
        ) : bands.isError ? (
          <ErrorState error={bands.error} title="Could not load the bands" onRetry={() => void bands.refetch()} />
        ) : bands.data.data.length === 0 ? (
          <p className="muted">No declared band: every figure is judged against its learned band.</p>
        ) : (
          <BandsTable bands={bands.data.data} />
        )}
        <RoleGate needed="operator" what="declare a band">
          <BandForm />
        </RoleGate>
      </section>
    </>
  );
}
