// New job: hosts, experiment, and that experiment's generated parameter form. Client-side checks use
// the schema's own bounds and show in place as the person types; a 422 from the server lands next
// to the field its `loc` names. On success the caller navigates to the run that measures. A two-host
// network job takes exactly two hosts in the order picked: the first serves, the second drives.
import { useMemo, useState, type FormEvent } from 'react';
import { durationEstimators, expectedDuration, fieldApplies } from '../../../config/experiments';
import { ApiError, errorMessage } from '../../../lib/api/errors';
import type { Experiment, JobCreate, JobPublic } from '../../../lib/api/types';
import { formatDuration } from '../../../lib/format';
import { useCreateJob } from '../api/create-job';
import { fieldsFromSchema, initialValues, validateParams, type RawValue, type RawValues } from '../lib/param-schema';
import { mapServerIssues, type MappedErrors } from '../lib/server-errors';
import { ParamsForm } from './ParamsForm';

export interface HostOption {
  id: number;
  name: string;
  online: boolean;
}

export interface NewJobFormProps {
  hosts: HostOption[];
  experiments: Experiment[];
  initialHostIds?: number[];
  initialExperiment?: string;
  onCreated: (job: JobPublic) => void;
}

const ID = 'new-job';
/** The experiment whose host_ids are [serving host, driving host]. */
const PAIR = 'network_pair';

function hostProblem(kind: string, hostIds: number[]): string | null {
  if (kind === PAIR) {
    if (hostIds.length === 2) return null;
    return `Pick exactly two hosts (${hostIds.length} picked): the first you pick serves, the second drives`;
  }
  return hostIds.length === 0 ? 'Pick at least one host' : null;
}

export function NewJobForm({ hosts, experiments, initialHostIds, initialExperiment, onCreated }: NewJobFormProps) {
  const [hostIds, setHostIds] = useState<number[]>(() => {
    const wanted = (initialHostIds ?? []).filter((id) => hosts.some((h) => h.id === id));
    if (wanted.length) return wanted;
    return hosts.length === 1 ? [(hosts[0] as HostOption).id] : [];
  });
  const [kind, setKind] = useState<string>(
    () => experiments.find((e) => e.kind === initialExperiment)?.kind ?? experiments[0]?.kind ?? '',
  );
  const experiment = experiments.find((e) => e.kind === kind);
  const allFields = useMemo(() => fieldsFromSchema(experiment?.parameters), [experiment]);
  const [rawByKind, setRawByKind] = useState<Record<string, RawValues>>({});
  const raw = rawByKind[kind] ?? initialValues(allFields);
  // A field the chosen op ignores is not shown (STREAM ops have no block size; only latency has sizes)
  const fields = allFields.filter((f) => fieldApplies(kind, f.name, raw));
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [server, setServer] = useState<MappedErrors>({ fields: {}, form: [] });
  const create = useCreateJob();

  const { params, errors: clientErrors } = validateParams(fields, raw);
  const pair = kind === PAIR;
  const hostError = hostProblem(kind, hostIds);
  const nameOf = (id: number | undefined) => hosts.find((h) => h.id === id)?.name ?? '?';

  const shownErrors: Record<string, string> = {};
  for (const [name, msg] of Object.entries(clientErrors)) if (submitted || touched.has(name)) shownErrors[name] = msg;
  for (const [name, msg] of Object.entries(server.fields)) shownErrors[name] ??= msg;
  // Too many hosts for a two-host job is said at once; too few waits for submit, like other fields.
  const hostsShownError = (submitted || (pair && hostIds.length > 2) ? hostError : null) ?? server.fields.host_ids ?? null;
  const experimentError = server.fields.experiment ?? null;

  const estimator = durationEstimators[kind];
  const estimate = Object.keys(clientErrors).length === 0 ? estimator?.(params) : undefined;
  const expected = estimate !== undefined ? expectedDuration(kind, params) : undefined;
  // Repeat until stable: as few as `repeats`, as many as `max_repeats`.
  const upTo =
    estimate !== undefined && Number(params.stable_cv) > 0 && Number(params.max_repeats) > Number(params.repeats)
      ? estimator?.({ ...params, repeats: params.max_repeats })
      : undefined;

  const clearServer = (name: string) =>
    setServer((s) => {
      if (!(name in s.fields) && s.form.length === 0) return s;
      const { [name]: _dropped, ...rest } = s.fields;
      return { fields: rest, form: [] };
    });

  const onParamChange = (name: string, value: RawValue) => {
    setRawByKind((all) => ({ ...all, [kind]: { ...raw, [name]: value } }));
    setTouched((t) => (t.has(name) ? t : new Set(t).add(name)));
    clearServer(name);
  };

  const toggleHost = (id: number, on: boolean) => {
    setHostIds((ids) => (on ? [...ids, id] : ids.filter((x) => x !== id)));
    clearServer('host_ids');
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    const firstBad = hostError ? `${ID}-host-${hosts[0]?.id}` : fields.find((f) => clientErrors[f.name])?.name;
    if (hostError || Object.keys(clientErrors).length) {
      const el = document.getElementById(hostError ? (firstBad as string) : `${ID}-${firstBad}`);
      el?.focus();
      return;
    }
    const body = { host_ids: hostIds, experiment: kind, params } as unknown as JobCreate;
    create.mutate(body, {
      onSuccess: (job) => onCreated(job),
      onError: (err) => {
        if (err instanceof ApiError && err.status === 422 && err.issues.length) {
          setServer(mapServerIssues(err.issues, fields.map((f) => f.name)));
        } else {
          setServer({ fields: {}, form: [errorMessage(err)] });
        }
      },
    });
  };

  return (
    <form className="card form" onSubmit={onSubmit} noValidate aria-label="New job">
      <fieldset
        className="fieldset"
        aria-describedby={[pair ? `${ID}-pair-roles` : '', hostsShownError ? `${ID}-hosts-error` : ''].filter(Boolean).join(' ') || undefined}
      >
        <legend>{pair ? 'Hosts (two: the first serves, the second drives)' : 'Hosts'}</legend>
        {hosts.length === 0 ? <p className="muted">No host has registered yet. Start a runner on a target host first.</p> : null}
        <ul className="host-options">
          {hosts.map((h) => (
            <li key={h.id}>
              <label className="check">
                <input
                  id={`${ID}-host-${h.id}`}
                  type="checkbox"
                  checked={hostIds.includes(h.id)}
                  onChange={(e) => toggleHost(h.id, e.target.checked)}
                />
                {h.name}
                <span className={`badge ${h.online ? 'badge-ok' : 'badge-muted'}`}>{h.online ? 'online' : 'offline'}</span>
                {pair && hostIds.indexOf(h.id) === 0 ? <span className="badge badge-info">serves</span> : null}
                {pair && hostIds.indexOf(h.id) === 1 ? <span className="badge badge-info">drives</span> : null}
              </label>
            </li>
          ))}
        </ul>
        {pair ? (
          <div id={`${ID}-pair-roles`} className="pair-roles" role="note" aria-label="Host roles">
            {hostIds.length >= 2 ? (
              <p>
                <strong>{nameOf(hostIds[0])}</strong> serves (listens on a port it chooses);{' '}
                <strong>{nameOf(hostIds[1])}</strong> drives (connects to it and measures).{' '}
                <button
                  type="button"
                  className="button button-small"
                  onClick={() => setHostIds(([a, b, ...rest]) => [b as number, a as number, ...rest])}
                >
                  Swap roles
                </button>
              </p>
            ) : (
              <p className="help">
                {hostIds.length === 1
                  ? `${nameOf(hostIds[0])} serves; pick the host that drives (connects to it and measures).`
                  : 'Pick the host that serves first, then the host that drives (connects to it and measures).'}
              </p>
            )}
          </div>
        ) : null}
        {hostsShownError ? (
          <p id={`${ID}-hosts-error`} className="field-error">
            {hostsShownError}
          </p>
        ) : null}
      </fieldset>

      <div className={`field${experimentError ? ' field-invalid' : ''}`}>
        <label htmlFor={`${ID}-experiment`}>Experiment</label>
        <select
          id={`${ID}-experiment`}
          value={kind}
          aria-describedby={`${ID}-experiment-help`}
          onChange={(e) => {
            setKind(e.target.value);
            setTouched(new Set());
            setSubmitted(false);
            setServer({ fields: {}, form: [] });
          }}
        >
          {experiments.map((x) => (
            <option key={x.kind} value={x.kind}>
              {x.title} ({x.kind})
            </option>
          ))}
        </select>
        <p id={`${ID}-experiment-help`} className="help">
          {experiment?.description}
        </p>
        {experimentError ? <p className="field-error">{experimentError}</p> : null}
      </div>

      <fieldset className="fieldset">
        <legend>Parameters</legend>
        <ParamsForm
          fields={fields}
          values={raw}
          errors={shownErrors}
          onChange={onParamChange}
          onBlur={(name) => setTouched((t) => (t.has(name) ? t : new Set(t).add(name)))}
          idPrefix={ID}
        />
      </fieldset>

      <p className="estimate" aria-live="polite">
        Estimated duration:{' '}
        <strong>
          {estimate !== undefined ? formatDuration(estimate) : '—'}
          {upTo !== undefined ? ` – ${formatDuration(upTo)}` : ''}
        </strong>
        {upTo !== undefined ? ' (repeating until stable)' : ''}
        {estimate !== undefined && hostIds.length > 1 && !pair ? ' per host' : ''}
        {expected && expected.reference ? (
          <span className="small">
            {' '}
            + up to {formatDuration(expected.reference)} for the reference tools: History shows up to {formatDuration(expected.upTo)}, the
            server&apos;s expected duration
          </span>
        ) : null}
      </p>

      {server.form.length ? (
        <div className="state state-error" role="alert">
          <p>
            <strong>The server refused the job:</strong> {server.form.join('; ')}
          </p>
        </div>
      ) : null}

      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          {create.isPending ? 'Starting…' : 'Start run'}
        </button>
      </div>
    </form>
  );
}
