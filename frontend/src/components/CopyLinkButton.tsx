// "Copy link": the page's URL already encodes the view (run id, filters, compared runs, baseline),
// so sharing the view is copying it. Falls back to showing the link when the clipboard is blocked.
import { useClipboard } from '../lib/clipboard';

export function CopyLinkButton({ label = 'Copy link' }: { label?: string }) {
  const { state, copy } = useClipboard();
  const href = typeof window !== 'undefined' ? window.location.href : '';

  return (
    <span className="copy-link">
      <button type="button" className="button button-small" onClick={() => void copy(window.location.href)}>
        {label}
      </button>
      <span role="status" aria-live="polite" className="small muted">
        {state === 'copied' ? 'Link copied' : ''}
      </span>
      {state === 'failed' ? (
        <input className="copy-link-field" type="text" readOnly value={href} aria-label="Link to this view" onFocus={(e) => e.currentTarget.select()} />
      ) : null}
    </span>
  );
}
