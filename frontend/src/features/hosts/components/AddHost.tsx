// "Add host" (admin): a single-use registration token with its expiry, the one command to paste on
// the target host (it fetches the runner and kernels from this server, installs, registers and sets
// up a systemd unit; run again, it upgrades in place), and the container alternative.
import { useId, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { CopyableText } from '../../../components/CopyButton';
import { Dialog } from '../../../components/Dialog';
import { errorMessage, formatWait } from '../../../lib/api/errors';
import type { RegistrationToken } from '../../../lib/api/types';
import { formatDateTime } from '../../../lib/format';
import { useCreateRegistrationToken } from '../api/create-registration-token';
import { getHostsQueryOptions } from '../api/get-hosts';

export const TTL_CHOICES = [
  { seconds: 900, label: '15 minutes' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86400, label: '24 hours' },
] as const;

/** The server URL a command carries when it is a loopback one (127.x, ::1, localhost): no other machine reaches it. */
export function loopbackUrl(command: string): string | null {
  const m = /https?:\/\/(\[[^\]]+\]|[^\s/:'"]+)(:\d+)?/.exec(command);
  if (!m) return null;
  const host = (m[1] ?? '').replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.startsWith('127.') || host === '::1' ? m[0] : null;
}

/** Said where a command is handed out: a loopback address works on this machine only, and how to change it. */
export function LocalAddressWarning({ command }: { command: string }) {
  const url = loopbackUrl(command);
  if (!url) return null;
  return (
    <div className="state state-warn" role="alert" aria-label="Only this machine can reach this address">
      <p>
        <strong>Only this machine can reach {url}.</strong> The command works on this machine only: another host cannot connect to a loopback
        address. To add other machines, start the server with <code>HOSTBENCH_BIND=0.0.0.0</code> (it then listens on every interface), and set{' '}
        <code>HOSTBENCH_PUBLIC_URL</code> to the address they reach it at (for example <code>https://bench.example.org</code> behind a proxy);
        the commands here are built from it.
      </p>
    </div>
  );
}

function TokenDetails({ token, now }: { token: RegistrationToken; now: number }) {
  const left = (Date.parse(token.expires_at) - now) / 1000;
  return (
    <>
      <p className="secret-warning" role="note">
        This token registers <strong>one</strong> host and expires at <time dateTime={token.expires_at}>{formatDateTime(token.expires_at)}</time>
        {Number.isFinite(left) && left > 0 ? ` (in ${formatWait(left >= 60 ? Math.round(left / 60) * 60 : left)})` : ''}. It is shown only here.
      </p>
      <LocalAddressWarning command={token.install_command} />
      <h3 className="small-heading">On the target host, as root</h3>
      <p className="small muted">
        It downloads the runner and its kernels from this server (the host needs no internet access), installs them into one directory with
        a systemd unit, and registers. The host appears on this page within seconds. Running it again later upgrades in place.
      </p>
      <CopyableText text={token.install_command} label="Install command" testId="install-command" multiline />
      <h3 className="small-heading">Or in a container</h3>
      <CopyableText text={token.container_command} label="Container command" testId="container-command" multiline />
      <details className="small">
        <summary>The token alone</summary>
        <CopyableText text={token.token} label="Registration token" testId="registration-token" />
      </details>
    </>
  );
}

export function AddHost() {
  const id = useId();
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [ttl, setTtl] = useState<number>(TTL_CHOICES[0].seconds);
  const create = useCreateRegistrationToken();
  const [now, setNow] = useState(() => Date.now());

  const make = (ttl_s: number) => {
    setNow(Date.now());
    create.mutate({ ttl_s, uses: 1 }, { onSuccess: () => setNow(Date.now()) });
  };
  const close = () => {
    setOpen(false);
    create.reset();
    void qc.invalidateQueries({ queryKey: getHostsQueryOptions().queryKey });
  };

  return (
    <>
      <button
        type="button"
        className="button"
        onClick={() => {
          setOpen(true);
          make(ttl);
        }}
      >
        Add host
      </button>
      {open ? (
        <Dialog title="Add a host" onClose={close} wide>
          <div className="field field-inline">
            <label htmlFor={`${id}-ttl`}>Token valid for</label>
            <select
              id={`${id}-ttl`}
              value={ttl}
              onChange={(e) => {
                const v = Number(e.target.value);
                setTtl(v);
                make(v);
              }}
              disabled={create.isPending}
            >
              {TTL_CHOICES.map((c) => (
                <option key={c.seconds} value={c.seconds}>
                  {c.label}
                </option>
              ))}
            </select>
          </div>
          {create.isPending ? (
            <p role="status" className="state state-loading">
              <span className="spinner" aria-hidden="true" /> Making a registration token…
            </p>
          ) : create.isError ? (
            <div className="state state-error" role="alert">
              <p>
                <strong>Could not make a registration token:</strong> {errorMessage(create.error)}
              </p>
              <button type="button" className="button" onClick={() => make(ttl)}>
                Try again
              </button>
            </div>
          ) : create.data ? (
            <TokenDetails token={create.data} now={now} />
          ) : null}
          <div className="form-actions">
            <button type="button" className="button" onClick={() => make(ttl)} disabled={create.isPending}>
              New token
            </button>
            <button type="button" className="button button-ghost" onClick={close}>
              Done
            </button>
          </div>
        </Dialog>
      ) : null}
    </>
  );
}
