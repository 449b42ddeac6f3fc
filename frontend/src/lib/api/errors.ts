// One error type for every API failure. The backend answers {"detail": "text"} or, for 422,
// {"detail": [{loc, msg, type}]}; both are kept so forms can put a message next to its field.

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type?: string;
}

// The signed-in person's role, set when GET /api/auth/me answers, so that a 403 says whose role fell
// short. The server decides; the dashboard only hides what the role cannot do.
let signedInRole: string | null = null;

export function setSignedInRole(role: string | null): void {
  signedInRole = role;
}

/** A 403 in words: a role that falls short, or a request the server refused for another reason
 * (a missing CSRF token, a foreign origin), which no role would fix. */
export function forbiddenMessage(detail: string, role: string | null = signedInRole): string {
  if (/csrf|origin|cross-site/i.test(detail)) return `Refused by the server: ${detail}`;
  const who = role ? `Your role (${role})` : 'Your role';
  return detail ? `${who} cannot do this: ${detail}` : `${who} cannot do this.`;
}

export class ApiError extends Error {
  readonly status: number;
  readonly issues: ValidationIssue[];
  /** Seconds to wait, from Retry-After on a 429 or 503. */
  readonly retryAfterS: number | null;
  /** The server's own words (`detail`), before any rewording here. */
  readonly detail: string;

  constructor(status: number, message: string, issues: ValidationIssue[] = [], retryAfterS: number | null = null, detail = message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.issues = issues;
    this.retryAfterS = retryAfterS;
    this.detail = detail;
  }

  static fromBody(status: number, body: unknown, statusText = '', headers?: Headers): ApiError {
    const detail = isRecord(body) ? body.detail : undefined;
    if (Array.isArray(detail)) {
      const issues = detail.filter(isIssue);
      const message = issues.length
        ? issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ')
        : `HTTP ${status}`;
      return new ApiError(status, message, issues);
    }
    if (status === 429) {
      const retry = parseRetryAfter(headers?.get('retry-after') ?? null);
      const text = typeof detail === 'string' && detail ? detail : 'too many requests';
      return new ApiError(status, retry === null ? text : `${text} (try again in ${formatWait(retry)})`, [], retry, text);
    }
    if (status === 503) {
      // The server sheds load (busy, or the database briefly unavailable) with Retry-After: kept, so that a
      // query waits as long as the server asked before asking again (lib/query-client.ts).
      const retry = parseRetryAfter(headers?.get('retry-after') ?? null);
      const text = typeof detail === 'string' && detail ? detail : 'the server is busy';
      return new ApiError(status, text, [], retry, text);
    }
    if (status === 403) {
      const text = typeof detail === 'string' ? detail : '';
      return new ApiError(status, forbiddenMessage(text), [], null, text);
    }
    if (typeof detail === 'string' && detail) return new ApiError(status, detail);
    if (typeof body === 'string' && body) return new ApiError(status, `HTTP ${status}: ${body.slice(0, 200)}`);
    return new ApiError(status, `HTTP ${status}${statusText ? ` ${statusText}` : ''}`);
  }
}

/** Retry-After as seconds (an integer, or an HTTP date). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const n = Number(value);
  if (Number.isFinite(n)) return Math.max(0, Math.ceil(n));
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : Math.max(0, Math.ceil((t - now) / 1000));
}

/** "45 s", "2 min", "1 min 30 s", "1 h 5 min". */
export function formatWait(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  if (h) return m ? `${h} h ${m} min` : `${h} h`;
  return rest ? `${m} min ${rest} s` : `${m} min`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function isIssue(v: unknown): v is ValidationIssue {
  return isRecord(v) && Array.isArray(v.loc) && typeof v.msg === 'string';
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Await an openapi-fetch call; return its data or throw ApiError (status 0 = network failure). */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await call;
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, `Cannot reach the API (${e instanceof Error ? e.message : String(e)})`);
  }
  const { data, error, response } = result;
  if (error !== undefined || !response.ok) throw ApiError.fromBody(response.status, error, response.statusText, response.headers);
  return data as T;
}

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
