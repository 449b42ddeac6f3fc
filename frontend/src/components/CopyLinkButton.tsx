// "Copy link": the page's URL already encodes the view (run id, filters, compared runs, baseline),
// so sharing the view is copying it. Falls back to showing the link when the clipboard is blocked.
import { useEffect, useState } from 'react';

export function CopyLinkButton({ label = 'Copy link' }: { label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'manual'>('idle');
  const href = typeof window !== 'undefined' ? window.location.href : '';

  useEffect(() => {
    if (state !== 'copied') return;
    const t = setTimeout(() => setState('idle'), 2500);
    return () => clearTimeout(t);
  }, [state]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(window.location.href);
      setState('copied');
    } catch {
      setState('manual');
    }
  };

  return (
    <span className="copy-link">
      <button type="button" className="button button-small" onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" aria-live="polite" className="small muted">
        {state === 'copied' ? 'Link copied' : ''}
      </span>
      {state === 'manual' ? (
        <input className="copy-link-field" type="text" readOnly value={href} aria-label="Link to this view" onFocus={(e) => e.currentTarget.select()} />
      ) : null}
    </span>
  );
}
