// Sign-in failures in words a person can act on.
import { ApiError, errorMessage, formatWait } from '../../../lib/api/errors';

export function signInErrorText(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 401) return 'Wrong name or password.';
    if (e.status === 429) {
      return e.retryAfterS !== null
        ? `Too many failed sign-ins. Wait ${formatWait(e.retryAfterS)} and try again.`
        : 'Too many failed sign-ins. Wait a few minutes and try again.';
    }
    if (e.status === 0) return `Cannot reach the server. ${e.message}`;
    if (e.status === 422) return 'Enter your name and password.';
  }
  return `Sign-in failed: ${errorMessage(e)}`;
}

export function linkErrorText(e: unknown): string {
  if (e instanceof ApiError && [400, 401, 404, 410].includes(e.status)) {
    const why = e.detail || 'it is unknown, used or expired';
    return `This sign-in link cannot be used: ${why}.${/admin/i.test(why) ? '' : ' Ask an admin for a new one.'}`;
  }
  if (e instanceof ApiError && e.status === 429) return signInErrorText(e);
  return `Could not sign in with this link: ${errorMessage(e)}`;
}

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

export function newPasswordProblem(pw: string): string | null {
  if (pw.length < PASSWORD_MIN) return `At least ${PASSWORD_MIN} characters`;
  if (pw.length > PASSWORD_MAX) return `At most ${PASSWORD_MAX} characters`;
  return null;
}
