// Set or change one's own password. The current one is asked for only when there is one (a person
// signed in by a one-time link has none yet).
import { useId, useState, type FormEvent } from 'react';
import { TextField } from '../../../components/TextField';
import { ApiError, errorMessage } from '../../../lib/api/errors';
import { useChangePassword } from '../api/change-password';
import { PASSWORD_MAX, PASSWORD_MIN, newPasswordProblem } from '../lib/messages';

export function PasswordForm({ hasPassword, onDone, submitLabel }: { hasPassword: boolean; onDone?: () => void; submitLabel?: string }) {
  const id = useId();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [touched, setTouched] = useState(false);
  const [saved, setSaved] = useState(false);
  const change = useChangePassword();

  const nextProblem = newPasswordProblem(next);
  const repeatProblem = repeat !== next ? 'The two new passwords differ' : null;
  const currentProblem = hasPassword && !current ? 'Enter your current password' : null;
  const serverError =
    change.error instanceof ApiError && change.error.status === 401 && /current password/i.test(change.error.detail)
      ? 'The current password is wrong.'
      : change.error instanceof ApiError && change.error.issues.length
        ? change.error.issues.map((i) => i.msg).join('; ')
        : change.isError
          ? errorMessage(change.error)
          : null;

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    setSaved(false);
    if (nextProblem || repeatProblem || currentProblem) return;
    change.mutate(
      { current_password: hasPassword ? current : null, new_password: next },
      {
        onSuccess: () => {
          setCurrent('');
          setNext('');
          setRepeat('');
          setTouched(false);
          setSaved(true);
          onDone?.();
        },
      },
    );
  };

  const field = (key: string, label: string, value: string, set: (v: string) => void, problem: string | null, autoComplete: string, help?: string) => {
    return (
      <TextField
        id={`${id}-${key}`}
        label={label}
        error={touched ? problem : null}
        help={help}
        type="password"
        autoComplete={autoComplete}
        value={value}
        maxLength={PASSWORD_MAX + 1}
        onChange={(e) => set(e.target.value)}
      />
    );
  };

  return (
    <form className="form password-form" aria-label={hasPassword ? 'Change password' : 'Set a password'} onSubmit={onSubmit} noValidate>
      {hasPassword ? field('current', 'Current password', current, setCurrent, currentProblem, 'current-password') : null}
      {field('new', 'New password', next, setNext, nextProblem, 'new-password', `${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`)}
      {field('repeat', 'Repeat the new password', repeat, setRepeat, repeatProblem, 'new-password')}
      {serverError ? (
        <p className="field-error" role="alert">
          {serverError}
        </p>
      ) : null}
      <p role="status" aria-live="polite" className="small">
        {saved ? 'Password saved. Other browsers signed in as you were signed out.' : ''}
      </p>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={change.isPending}>
          {change.isPending ? 'Saving…' : (submitLabel ?? (hasPassword ? 'Change password' : 'Set password'))}
        </button>
      </div>
    </form>
  );
}
