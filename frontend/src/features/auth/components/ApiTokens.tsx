// Personal API tokens for scripts (`Authorization: Bearer hbpat_…`). A new token's secret is shown
// once, with a copy button; the list shows names and dates only, and each can be revoked.
import { useId, useState, type FormEvent } from 'react';
import { CopyableText } from '../../../components/CopyButton';
import { ConfirmDialog } from '../../../components/Dialog';
import { ErrorState, Loading } from '../../../components/Status';
import { TextField } from '../../../components/TextField';
import { ApiError, errorMessage } from '../../../lib/api/errors';
import type { ApiTokenCreated, ApiTokenPublic } from '../../../lib/api/types';
import { formatDateTime } from '../../../lib/format';
import { useCreateApiToken } from '../api/create-api-token';
import { useApiTokens } from '../api/get-api-tokens';
import { useRevokeApiToken } from '../api/revoke-api-token';

const EXPIRY_CHOICES = [
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: '', label: 'never' },
] as const;

function NewTokenShownOnce({ created, onDone }: { created: ApiTokenCreated; onDone: () => void }) {
  return (
    <section className="secret-once" aria-labelledby="new-token-heading">
      <h3 id="new-token-heading">New token “{created.name}”</h3>
      <p className="secret-warning" role="note">
        <strong>Copy it now: you will not see it again.</strong> The server keeps only a hash of it.
        {created.expires_at ? ` It expires ${formatDateTime(created.expires_at)}.` : ' It does not expire; revoke it when it is no longer needed.'}
      </p>
      <CopyableText text={created.token} label="New API token" testId="new-api-token" />
      <p className="small muted">
        Use it as <code>Authorization: Bearer {created.token.slice(0, 6)}…</code>
      </p>
      <button type="button" className="button" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}

function CreateTokenForm({ onCreated }: { onCreated: (t: ApiTokenCreated) => void }) {
  const id = useId();
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState<string>('90');
  const [touched, setTouched] = useState(false);
  const create = useCreateApiToken();
  const nameProblem = !name.trim() ? 'Name the token (what will use it)' : name.trim().length > 64 ? 'At most 64 characters' : null;
  const shown = touched ? nameProblem : null;
  const serverError =
    create.error instanceof ApiError && create.error.issues.length ? create.error.issues.map((i) => i.msg).join('; ') : create.isError ? errorMessage(create.error) : null;

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (nameProblem) return;
    create.mutate(
      { name: name.trim(), expires_days: expiry ? Number(expiry) : null },
      {
        onSuccess: (t) => {
          setName('');
          setTouched(false);
          onCreated(t);
        },
      },
    );
  };

  return (
    <form className="form form-row" aria-label="New API token" onSubmit={onSubmit} noValidate>
      <TextField
        id={`${id}-name`}
        label="Token name"
        error={shown}
        type="text"
        value={name}
        maxLength={65}
        placeholder="e.g. nightly compare script"
        onChange={(e) => setName(e.target.value)}
      />
      <div className="field">
        <label htmlFor={`${id}-expiry`}>Expires after</label>
        <select id={`${id}-expiry`} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
          {EXPIRY_CHOICES.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create token'}
        </button>
      </div>
      {serverError ? (
        <p className="field-error" role="alert">
          Could not create the token: {serverError}
        </p>
      ) : null}
    </form>
  );
}

export function ApiTokens() {
  const tokens = useApiTokens();
  const revoke = useRevokeApiToken();
  const [created, setCreated] = useState<ApiTokenCreated | null>(null);
  const [confirm, setConfirm] = useState<ApiTokenPublic | null>(null);

  return (
    <section className="card" aria-labelledby="api-tokens-heading">
      <h2 id="api-tokens-heading">Personal API tokens</h2>
      <p className="muted small">
        For scripts: send <code>Authorization: Bearer hbpat_…</code>. A token can do what your role can do.
      </p>
      {created ? <NewTokenShownOnce created={created} onDone={() => setCreated(null)} /> : <CreateTokenForm onCreated={setCreated} />}
      {tokens.isPending ? (
        <Loading label="Loading tokens…" />
      ) : tokens.isError ? (
        <ErrorState error={tokens.error} title="Could not load your tokens" onRetry={() => void tokens.refetch()} />
      ) : tokens.data.data.length === 0 ? (
        <p className="muted">You have no API token.</p>
      ) : (
        <div className="table-scroll">
          <table className="table">
            <caption className="visually-hidden">Your API tokens</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.data.map((t) => (
                <tr key={t.id}>
                  <th scope="row">{t.name}</th>
                  <td>{formatDateTime(t.created_at)}</td>
                  <td>{t.last_used_at ? formatDateTime(t.last_used_at) : 'never'}</td>
                  <td>{t.expires_at ? formatDateTime(t.expires_at) : 'never'}</td>
                  <td>
                    <button type="button" className="button button-small button-danger" onClick={() => setConfirm(t)} aria-label={`Revoke token ${t.name}`}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {confirm ? (
        <ConfirmDialog
          title={`Revoke token “${confirm.name}”?`}
          confirmLabel="Revoke token"
          pending={revoke.isPending}
          error={revoke.isError ? errorMessage(revoke.error) : null}
          onClose={() => {
            revoke.reset();
            setConfirm(null);
          }}
          onConfirm={() => revoke.mutate(confirm.id, { onSuccess: () => setConfirm(null) })}
        >
          <p>Scripts using it get 401 from the next call. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
