// Loading, empty and error states: every view that waits on the API renders one of these, never a
// blank area.
import type { ReactNode } from 'react';
import { errorMessage } from '../lib/api/errors';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

export function ErrorState({ error, title = 'Something went wrong', onRetry }: { error: unknown; title?: string; onRetry?: () => void }) {
  return (
    <div className="state state-error" role="alert">
      <p>
        <strong>{title}:</strong> {errorMessage(error)}
      </p>
      {onRetry ? (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state state-empty">{children}</div>;
}
