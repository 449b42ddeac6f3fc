// A modal dialog: named by its title, focus moved inside on open and given back on close, Escape and
// the backdrop close it. (Not the native <dialog>: jsdom, which the component tests run in, lacks
// showModal.)
import { useEffect, useId, useRef, type ReactNode } from 'react';

export function Dialog({ title, onClose, children, wide = false }: { title: ReactNode; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const titleId = useId();
  const box = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const first =
      content.current?.querySelector<HTMLElement>('[autofocus]') ??
      content.current?.querySelector<HTMLElement>('input, select, textarea, button, [tabindex="0"]');
    (first ?? box.current)?.focus();
    return () => before?.focus?.();
  }, []);

  return (
    <div
      className="dialog-backdrop"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) onClose();
      }}
    >
      <div
        ref={box}
        className={`dialog card${wide ? ' dialog-wide' : ''}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        tabIndex={-1}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation();
            onClose();
          }
        }}
      >
        <header className="dialog-header">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="button button-ghost button-small" onClick={onClose} aria-label="Close">
            ×
          </button>
        </header>
        <div ref={content}>{children}</div>
      </div>
    </div>
  );
}

/** "Are you sure?" with the consequence in words; the confirm button names the action. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  closeLabel = 'Cancel',
  danger = true,
  pending = false,
  error,
  onConfirm,
  onClose,
}: {
  title: ReactNode;
  children: ReactNode;
  confirmLabel: string;
  /** The button that leaves things as they are ("Cancel" unless that would read as the action itself). */
  closeLabel?: string;
  danger?: boolean;
  pending?: boolean;
  error?: ReactNode;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Dialog title={title} onClose={onClose}>
      <div className="dialog-body">{children}</div>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="button" className={`button ${danger ? 'button-danger' : 'button-primary'}`} onClick={onConfirm} disabled={pending}>
          {pending ? 'Working…' : confirmLabel}
        </button>
        <button type="button" className="button button-ghost" onClick={onClose}>
          {closeLabel}
        </button>
      </div>
    </Dialog>
  );
}
