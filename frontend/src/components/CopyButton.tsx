// Copy a secret or a command to the clipboard. Where the clipboard is blocked (plain http on another
// host, a locked-down browser) the text stays selectable beside the button, and we say so.
import { useClipboard } from '../lib/clipboard';

export function CopyButton({ text, label = 'Copy', what = 'Text' }: { text: string; label?: string; what?: string }) {
  const { state, copy } = useClipboard();

  return (
    <span className="copy-button">
      <button type="button" className="button button-small" onClick={() => void copy(text)}>
        {label}
      </button>
      <span role="status" aria-live="polite" className="small muted">
        {state === 'copied' ? `${what} copied` : state === 'failed' ? 'The browser blocked the clipboard: select the text and copy it.' : ''}
      </span>
    </span>
  );
}

/** A read-only block of text (a command, a token) with its copy button. */
export function CopyableText({ text, label, testId, multiline = false }: { text: string; label: string; testId?: string; multiline?: boolean }) {
  return (
    <div className="copyable">
      <pre className={`copyable-text${multiline ? ' copyable-multiline' : ''}`} aria-label={label} data-testid={testId} tabIndex={0}>
        <code>{text}</code>
      </pre>
      <CopyButton text={text} label={`Copy ${label.toLowerCase()}`} what={label} />
    </div>
  );
}
