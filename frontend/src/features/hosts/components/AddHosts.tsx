// "Add hosts" (admin, issue 30): one enrolment token for a fleet (a use count or unlimited, an expiry, labels given
// to every host that joins, a name) and every way in the server serves for it (docs/fleet.md): the shell command
// for configuration management, cloud-init user data, the container command and the Kubernetes DaemonSet.
import { useId, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { CopyableText } from '../../../components/CopyButton';
import { Dialog } from '../../../components/Dialog';
import { errorMessage } from '../../../lib/api/errors';
import type { RegistrationToken, RegistrationTokenCreate } from '../../../lib/api/types';
import { formatDateTime } from '../../../lib/format';
import { useCreateRegistrationToken } from '../api/create-registration-token';
import { LocalAddressWarning } from './AddHost';

export const FLEET_TTL_CHOICES = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 86400, label: '24 hours' },
  { seconds: 7 * 86400, label: '7 days' },
  { seconds: 30 * 86400, label: '30 days' },
] as const;

/** "rack=12, role=db" → {rack: "12", role: "db"}; a part without "=" is an error naming it. */
export function parseLabels(text: string): { labels: Record<string, string>; error: string | null } {
  const labels: Record<string, string> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = part.indexOf('=');
    if (at <= 0) return { labels, error: `“${part}” is not key=value` };
    labels[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return { labels, error: null };
}

const FORMS = [
  { key: 'shell_command', label: 'Shell command', help: 'For Ansible, Salt, Puppet or a loop over ssh: as root, non-interactive; running it twice changes nothing.' },
  { key: 'cloud_init', label: 'cloud-init', help: 'User data for new instances: the runner is installed and joins at first boot.' },
  { key: 'container_command', label: 'Container', help: 'For hosts that run containers: the runner in one, with the host’s network and the access a benchmark needs.' },
  { key: 'kubernetes_manifest', label: 'Kubernetes DaemonSet', help: 'kubectl apply -f: a namespace, the token as a Secret, a service account and a DaemonSet with one runner per node.' },
] as const;

function Enrolment({ token }: { token: RegistrationToken }) {
  const [form, setForm] = useState<(typeof FORMS)[number]['key']>('shell_command');
  const shown = FORMS.find((f) => f.key === form) ?? FORMS[0];
  const uses = token.info.max_uses === null ? 'any number of hosts' : `up to ${token.info.max_uses.toLocaleString('en-US')} hosts`;
  return (
    <>
      <p className="secret-warning" role="note">
        This token enrols <strong>{uses}</strong> until <time dateTime={token.expires_at}>{formatDateTime(token.expires_at)}</time>
        {Object.keys(token.info.labels).length
          ? `, each labelled ${Object.entries(token.info.labels).map(([k, v]) => `${k}: ${String(v)}`).join(', ')}`
          : ''}
        . It is shown only here; a host that joins again from the same machine keeps its history.
      </p>
      <LocalAddressWarning command={token.install_command} />
      <div className="tabs" role="tablist" aria-label="Ways to install">
        {FORMS.map((f) => (
          <button key={f.key} type="button" role="tab" aria-selected={form === f.key} className={`tab${form === f.key ? ' tab-active' : ''}`} onClick={() => setForm(f.key)}>
            {f.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" aria-label={shown.label}>
        <p className="small muted">{shown.help}</p>
        <CopyableText text={token[shown.key]} label={shown.label} testId={`fleet-${shown.key}`} multiline />
      </div>
      <details className="small">
        <summary>The token alone</summary>
        <CopyableText text={token.token} label="Enrolment token" testId="enrolment-token" />
      </details>
    </>
  );
}

export function AddHosts() {
  const id = useId();
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [uses, setUses] = useState('100');
  const [unlimited, setUnlimited] = useState(false);
  const [ttl, setTtl] = useState<number>(FLEET_TTL_CHOICES[1].seconds);
  const [labelText, setLabelText] = useState('');
  const create = useCreateRegistrationToken();
  const labels = parseLabels(labelText);
  const count = Number(uses);
  const usesError = unlimited || (Number.isInteger(count) && count >= 1 && count <= 1_000_000) ? null : 'a whole number from 1 to 1,000,000';

  const close = () => {
    setOpen(false);
    create.reset();
    void qc.invalidateQueries({ queryKey: ['hosts'] });
  };
  const submit = () => {
    if (labels.error || usesError) return;
    const body: RegistrationTokenCreate = { ttl_s: ttl, uses: unlimited ? null : count, labels: labels.labels };
    if (name.trim()) body.name = name.trim();
    create.mutate(body);
  };

  return (
    <>
      <button type="button" className="button" onClick={() => setOpen(true)}>
        Add hosts
      </button>
      {open ? (
        <Dialog title="Add hosts: one token for a fleet" onClose={close} wide>
          {create.data ? (
            <Enrolment token={create.data} />
          ) : (
            <form
              aria-label="Enrolment token"
              onSubmit={(e) => {
                e.preventDefault();
                submit();
              }}
            >
              <div className="field">
                <label htmlFor={`${id}-name`}>Name</label>
                <input id={`${id}-name`} value={name} maxLength={128} placeholder="rack 12" onChange={(e) => setName(e.target.value)} />
              </div>
              <div className="field">
                <label htmlFor={`${id}-uses`}>Hosts that may join</label>
                <input
                  id={`${id}-uses`}
                  type="number"
                  min={1}
                  max={1_000_000}
                  value={uses}
                  disabled={unlimited}
                  aria-invalid={usesError !== null}
                  onChange={(e) => setUses(e.target.value)}
                />
                <label className="check">
                  <input type="checkbox" checked={unlimited} onChange={(e) => setUnlimited(e.target.checked)} /> Any number (until it expires or is revoked)
                </label>
                {usesError ? <p className="field-error">{usesError}</p> : null}
              </div>
              <div className="field">
                <label htmlFor={`${id}-ttl`}>Valid for</label>
                <select id={`${id}-ttl`} value={ttl} onChange={(e) => setTtl(Number(e.target.value))}>
                  {FLEET_TTL_CHOICES.map((c) => (
                    <option key={c.seconds} value={c.seconds}>
                      {c.label}
                    </option>
                  ))}
                </select>
              </div>
              <div className="field">
                <label htmlFor={`${id}-labels`}>Labels for every host that joins</label>
                <input id={`${id}-labels`} value={labelText} placeholder="rack=12, role=db" aria-invalid={labels.error !== null} onChange={(e) => setLabelText(e.target.value)} />
                {labels.error ? <p className="field-error">{labels.error}</p> : <p className="help">key=value, separated by commas; the hosts table filters by them.</p>}
              </div>
              {create.isError ? (
                <p className="field-error" role="alert">
                  Could not make the token: {errorMessage(create.error)}
                </p>
              ) : null}
              <div className="form-actions">
                <button type="submit" className="button button-primary" disabled={create.isPending || labels.error !== null || usesError !== null}>
                  {create.isPending ? 'Making the token…' : 'Make the token'}
                </button>
              </div>
            </form>
          )}
          <div className="form-actions">
            <button type="button" className="button button-ghost" onClick={close}>
              Done
            </button>
          </div>
        </Dialog>
      ) : null}
    </>
  );
}
