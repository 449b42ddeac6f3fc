// The clipboard's one state machine, for every copy button: copy, say "copied" for 2.5 s, or say that the
// browser refused (plain http on another host, a locked-down browser) so the caller can show the text instead.
import { useEffect, useState } from 'react';

export type ClipboardState = 'idle' | 'copied' | 'failed';

export function useClipboard(): { state: ClipboardState; copy: (text: string) => Promise<void> } {
  const [state, setState] = useState<ClipboardState>('idle');

  useEffect(() => {
    if (state !== 'copied') return;
    const t = setTimeout(() => setState('idle'), 2500);
    return () => clearTimeout(t);
  }, [state]);

  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };

  return { state, copy };
}
