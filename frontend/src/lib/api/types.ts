// API types derived from the generated schema by operation, not by component name, so a rename of a
// schema class in the backend does not ripple through the app. If a path changes, fix it here.
import type { paths } from './schema';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type Responses<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R } ? R : never;
type Ok<P extends keyof paths, M extends keyof paths[P], C extends number> =
  C extends keyof Responses<P, M> ? JsonOf<Responses<P, M>[C]> : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export type Health = Ok<'/api/health', 'get', 200>;
export type HostsPublic = Ok<'/api/hosts', 'get', 200>;
export type HostPublic = HostsPublic['data'][number];
export type HostLabelsUpdate = Body<'/api/hosts/{host_id}/labels', 'patch'>;
export type PeakKey = paths['/api/hosts/{host_id}/peaks/{key}']['put']['parameters']['path']['key'];
export type PeakOverride = Body<'/api/hosts/{host_id}/peaks/{key}', 'put'>;
export type ExperimentsPublic = Ok<'/api/experiments', 'get', 200>;
export type Experiment = ExperimentsPublic['data'][number];
export type JobCreate = Body<'/api/jobs', 'post'>;
export type JobPublic = Ok<'/api/jobs', 'post', 201>;
export type JobEstimate = Ok<'/api/jobs/estimate', 'post', 200>;
export type SuiteEstimate = Ok<'/api/suite-runs/estimate', 'post', 200>;
export type RunsPublic = Ok<'/api/runs', 'get', 200>;
export type RunPublic = Ok<'/api/runs/{run_id}', 'get', 200>;
export type RunStatus = RunPublic['status'];
export type RunPhase = NonNullable<RunPublic['phase']>;
export type RunResult = NonNullable<RunPublic['result']>;
export type ResultRow = RunResult['rows'][number];
export type Peak = NonNullable<ResultRow['peak']>;
export type SamplesPublic = Ok<'/api/runs/{run_id}/samples', 'get', 200>;
export type Sample = SamplesPublic['data'][number];
export type RunsQuery = NonNullable<paths['/api/runs']['get']['parameters']['query']>;

// Every run status of the generated union (the API's RunStatus, hostbench_common/runstatus.py), and whether it is
// active (not finished: runstatus.ACTIVE). tsc fails while a status is missing here or named that the API lacks;
// backend/tests/test_run_status.py fails while `active` differs from ACTIVE.
const STATUS_ACTIVE: Record<RunStatus, boolean> = {
  queued: true, dispatched: true, running: true, succeeded: false, failed: false, untrusted: false, cancelled: false,
};
export const RUN_STATUSES = Object.keys(STATUS_ACTIVE) as readonly RunStatus[];
export const ACTIVE_STATUSES: readonly RunStatus[] = RUN_STATUSES.filter((s) => STATUS_ACTIVE[s]);

export function isActive(status: RunStatus): boolean {
  return STATUS_ACTIVE[status];
}

// Auth, users, tokens, audit.
export type Me = Ok<'/api/auth/me', 'get', 200>;
export type Role = Me['role'];
export type LoginBody = Body<'/api/auth/login', 'post'>;
export type PasswordChange = Body<'/api/auth/password', 'put'>;
export type ApiTokensPublic = Ok<'/api/me/tokens', 'get', 200>;
export type ApiTokenPublic = ApiTokensPublic['data'][number];
export type ApiTokenCreate = Body<'/api/me/tokens', 'post'>;
export type ApiTokenCreated = Ok<'/api/me/tokens', 'post', 201>;
export type AuditPublic = Ok<'/api/audit', 'get', 200>;
export type AuditEvent = AuditPublic['data'][number];
export type AuditQuery = NonNullable<paths['/api/audit']['get']['parameters']['query']>;
export type UsersPublic = Ok<'/api/users', 'get', 200>;
export type UserPublic = UsersPublic['data'][number];
export type UserCreate = Body<'/api/users', 'post'>;
export type UserCreated = Ok<'/api/users', 'post', 201>;
export type UserUpdate = Body<'/api/users/{user_id}', 'patch'>;
export type SignInLink = Ok<'/api/users/{user_id}/sign-in-link', 'post', 200>;
export type RegistrationTokenCreate = Body<'/api/hosts/registration-tokens', 'post'>;
export type RegistrationToken = Ok<'/api/hosts/registration-tokens', 'post', 201>;
export type HostHistory = NonNullable<NonNullable<paths['/api/hosts/{host_id}']['delete']['parameters']['query']>['history']>;
