// One error type for every API failure. The backend answers {"detail": "text"} or, for 422,
// {"detail": [{loc, msg, type}]}; both are kept so forms can put a message next to its field.

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type?: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly issues: ValidationIssue[];

  constructor(status: number, message: string, issues: ValidationIssue[] = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.issues = issues;
  }

  static fromBody(status: number, body: unknown, statusText = ''): ApiError {
    const detail = isRecord(body) ? body.detail : undefined;
    if (Array.isArray(detail)) {
      const issues = detail.filter(isIssue);
      const message = issues.length
        ? issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ')
        : `HTTP ${status}`;
      return new ApiError(status, message, issues);
    }
    if (typeof detail === 'string' && detail) return new ApiError(status, detail);
    if (typeof body === 'string' && body) return new ApiError(status, `HTTP ${status}: ${body.slice(0, 200)}`);
    return new ApiError(status, `HTTP ${status}${statusText ? ` ${statusText}` : ''}`);
  }
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
  if (error !== undefined || !response.ok) throw ApiError.fromBody(response.status, error, response.statusText);
  return data as T;
}

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
