// Instance labels (provider, instance type, region), editable in place. Empty means "not set"
// (sent as null). Escape cancels; a 422 lands next to the field its `loc` names.
import { useId, useState, type FormEvent } from 'react';
import { TextField } from '../../../components/TextField';
import { ApiError, errorMessage } from '../../../lib/api/errors';
import type { HostPublic } from '../../../lib/api/types';
import { useUpdateHostLabels } from '../api/update-host-labels';
import { readLabels } from '../lib/inventory';

const FIELDS = [
  { key: 'provider', label: 'Provider', placeholder: 'e.g. aws' },
  { key: 'instance_type', label: 'Instance type', placeholder: 'e.g. c7i.large' },
  { key: 'region', label: 'Region', placeholder: 'e.g. eu-west-1' },
] as const;
type Key = (typeof FIELDS)[number]['key'];
const MAX = 64;

/** `canEdit`: the signed-in role may edit labels (operator or admin); otherwise they are only shown. */
export function HostLabelsEditor({ host, canEdit }: { host: HostPublic; canEdit: boolean }) {
  const id = useId();
  const labels = readLabels(host);
  const current: Record<Key, string> = { provider: labels.provider ?? '', instance_type: labels.instanceType ?? '', region: labels.region ?? '' };
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(current);
  const update = useUpdateHostLabels(host.id);

  const clientErrors: Partial<Record<Key, string>> = {};
  for (const f of FIELDS) if (draft[f.key].trim().length > MAX) clientErrors[f.key] = `At most ${MAX} characters`;
  const fieldErrors: Partial<Record<Key, string>> = { ...clientErrors };
  if (update.error instanceof ApiError) {
    for (const issue of update.error.issues) {
      const k = issue.loc[issue.loc.length - 1];
      if (typeof k === 'string' && FIELDS.some((f) => f.key === k)) fieldErrors[k as Key] ??= issue.msg;
    }
  }
  const formError = update.isError && !(update.error instanceof ApiError && update.error.issues.length) ? errorMessage(update.error) : null;

  const start = () => {
    setDraft(current);
    update.reset();
    setEditing(true);
  };
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (Object.keys(clientErrors).length) return;
    const body = Object.fromEntries(FIELDS.map((f) => [f.key, draft[f.key].trim() || null]));
    update.mutate(body, { onSuccess: () => setEditing(false) });
  };

  if (!editing || !canEdit) {
    return (
      <section className="labels" aria-label={`Instance labels of ${host.name}`}>
        <dl className="facts facts-inline">
          {FIELDS.map((f) => (
            <div key={f.key}>
              <dt>{f.label}</dt>
              <dd>{current[f.key] || <span className="muted">not set</span>}</dd>
            </div>
          ))}
        </dl>
        {canEdit ? (
          <button type="button" className="button button-small" onClick={start} aria-label={`Edit labels of ${host.name}`}>
            Edit labels
          </button>
        ) : null}
      </section>
    );
  }

  return (
    <form
      className="labels labels-form"
      aria-label={`Instance labels of ${host.name}`}
      onSubmit={onSubmit}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setEditing(false);
      }}
      noValidate
    >
      <div className="labels-grid">
        {FIELDS.map((f, i) => (
          <TextField
            key={f.key}
            id={`${id}-${f.key}`}
            label={f.label}
            error={fieldErrors[f.key] ?? null}
            type="text"
            value={draft[f.key]}
            placeholder={f.placeholder}
            maxLength={MAX + 1}
            autoFocus={i === 0}
            onChange={(e) => setDraft((d) => ({ ...d, [f.key]: e.target.value }))}
          />
        ))}
      </div>
      {formError ? (
        <p className="field-error" role="alert">
          Could not save: {formError}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="button button-primary button-small" disabled={update.isPending}>
          {update.isPending ? 'Saving…' : 'Save labels'}
        </button>
        <button type="button" className="button button-ghost button-small" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
