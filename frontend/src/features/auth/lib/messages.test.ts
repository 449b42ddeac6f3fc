import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../lib/api/errors';
import { linkErrorText, newPasswordProblem, signInErrorText } from './messages';

describe('sign-in messages', () => {
  it('names a wrong password, the wait of a rate limit, and an unreachable server', () => {
    expect(signInErrorText(new ApiError(401, 'wrong name or password'))).toBe('Wrong name or password.');
    expect(signInErrorText(ApiError.fromBody(429, { detail: 'too many sign-in attempts' }, '', new Headers({ 'Retry-After': '90' })))).toBe(
      'Too many failed sign-ins. Wait 1 min 30 s and try again.',
    );
    expect(signInErrorText(ApiError.fromBody(429, { detail: 'slow down' }))).toBe('Too many failed sign-ins. Wait a few minutes and try again.');
    expect(signInErrorText(new ApiError(0, 'Cannot reach the API (Failed to fetch)'))).toMatch(/^Cannot reach the server/);
  });

  it('says what to do with a used link', () => {
    expect(linkErrorText(new ApiError(401, 'sign-in link used or expired'))).toBe('This sign-in link cannot be used: sign-in link used or expired. Ask an admin for a new one.');
    expect(linkErrorText(new ApiError(401, 'this sign-in link is unknown, used or expired; ask an admin for a new one'))).toBe(
      'This sign-in link cannot be used: this sign-in link is unknown, used or expired; ask an admin for a new one.',
    );
  });

  it('checks the new password length as the server does (10..256)', () => {
    expect(newPasswordProblem('short')).toBe('At least 10 characters');
    expect(newPasswordProblem('x'.repeat(10))).toBeNull();
    expect(newPasswordProblem('x'.repeat(257))).toBe('At most 256 characters');
  });
});
