// The new-job form's state: hosts picked (in order), experiment, raw parameter values per experiment,
// which fields were touched, whether it was submitted, and the server's 422 mapped to fields. Client
// checks show in place as the person types; submitting focuses the first bad field or creates the job.
import { useMemo, useState, type FormEvent } from 'react';
import { ApiError, errorMessage } from '../../../lib/api/errors';
import type { Experiment, JobCreate, JobPublic } from '../../../lib/api/types';
import { fieldAppliesToAny, isTwoHost } from '../../../lib/experiments';
import { useCreateJob } from '../api/create-job';
import {
  FORM_ID,
  hostProblem,
  missingGpu,
  paramsToSend,
  shownFieldErrors,
  startingHostIds,
  startingKind,
  withoutServerError,
  type HostOption,
} from '../lib/job-form';
import { fieldsFromSchema, initialValues, validateParams, type RawValue, type RawValues } from '../../../lib/param-schema';
import { mapServerIssues, type MappedErrors } from '../lib/server-errors';

export interface JobFormInput {
  hosts: HostOption[];
  experiments: Experiment[];
  initialHostIds?: number[];
  initialExperiment?: string;
  onCreated: (job: JobPublic) => void;
}

const NO_SERVER_ERRORS: MappedErrors = { fields: {}, form: [] };

/** Raw parameter values, kept per experiment so switching back finds them as they were; `sent` holds only the
 * parameters the person changed (the server's defaults apply to the rest). */
function useParamValues(kind: string, experiment: Experiment | undefined) {
  const allFields = useMemo(() => fieldsFromSchema(experiment?.parameters, kind), [experiment, kind]);
  const initial = useMemo(() => initialValues(allFields), [allFields]);
  const [rawByKind, setRawByKind] = useState<Record<string, RawValues>>({});
  const raw = rawByKind[kind] ?? initial;
  // A field that does not apply to the values chosen is not shown (the experiment's `applies`: e.g. only a
  // latency op has working-set sizes); with several ops ticked, one that applies to any of their runs is
  const fields = allFields.filter((f) => !experiment || fieldAppliesToAny(experiment, f.name, raw));
  const setValue = (name: string, value: RawValue) => setRawByKind((all) => ({ ...all, [kind]: { ...raw, [name]: value } }));
  const { params, errors } = validateParams(fields, raw);
  return { fields, raw, setValue, params, errors, sent: paramsToSend(fields, params, raw, initial) };
}

export function useJobForm({ hosts, experiments, initialHostIds, initialExperiment, onCreated }: JobFormInput) {
  const [hostIds, setHostIds] = useState<number[]>(() => startingHostIds(hosts, initialHostIds));
  const [kind, setKind] = useState<string>(() => startingKind(experiments, initialExperiment));
  const experiment = experiments.find((e) => e.kind === kind);
  const { fields, raw, setValue, params, sent, errors: clientErrors } = useParamValues(kind, experiment);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [server, setServer] = useState<MappedErrors>(NO_SERVER_ERRORS);
  const create = useCreateJob();

  const pair = isTwoHost(experiment);
  // a GPU experiment on a host whose inventory lists no GPU is said at once, next to the hosts
  const gpuError = missingGpu(experiment, hosts, hostIds);
  const hostError = hostProblem(experiment, hostIds) ?? gpuError;
  const touch = (name: string) => setTouched((t) => (t.has(name) ? t : new Set(t).add(name)));
  const clearServer = (name: string) => setServer((s) => withoutServerError(s, name));

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    const firstBad = hostError ? `${FORM_ID}-host-${hosts[0]?.id}` : fields.find((f) => clientErrors[f.name])?.name;
    if (hostError || Object.keys(clientErrors).length) {
      document.getElementById(hostError ? (firstBad as string) : `${FORM_ID}-${firstBad}`)?.focus();
      return;
    }
    const body = { host_ids: hostIds, experiment: kind, params: sent } as unknown as JobCreate;
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

  const valid = Object.keys(clientErrors).length === 0;
  return {
    hostIds, kind, experiment, fields, raw, params, pair, server, onSubmit,
    // the body the form would send, for the server's estimate; null while it would be refused here
    estimateBody: valid && !hostError && hostIds.length ? ({ host_ids: hostIds, experiment: kind, params: sent } as unknown as JobCreate) : null,
    pending: create.isPending,
    valid: Object.keys(clientErrors).length === 0,
    shownErrors: shownFieldErrors(clientErrors, server.fields, submitted, touched),
    // Too many hosts for a two-host job is said at once; too few waits for submit, like other fields.
    hostsError: (submitted || (pair && hostIds.length > 2) ? hostError : null) ?? gpuError ?? server.fields.host_ids ?? null,
    experimentError: server.fields.experiment ?? null,
    toggleHost: (id: number, on: boolean) => {
      setHostIds((ids) => (on ? (ids.includes(id) ? ids : [...ids, id]) : ids.filter((x) => x !== id)));
      clearServer('host_ids');
    },
    swapRoles: () => setHostIds(([a, b, ...rest]) => [b as number, a as number, ...rest]),
    chooseExperiment: (next: string) => {
      setKind(next);
      setTouched(new Set());
      setSubmitted(false);
      setServer(NO_SERVER_ERRORS);
    },
    changeParam: (name: string, value: RawValue) => {
      setValue(name, value);
      touch(name);
      clearServer(name);
    },
    blurParam: touch,
  };
}

export type JobForm = ReturnType<typeof useJobForm>;
