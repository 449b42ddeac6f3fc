// Import (operators): pick a JSON file, as Export writes it; it is POSTed as a new saved suite of one's own. A file
// that is not a suite, or one the server refuses (every item is checked as a job body), is said in words.
import { useRef, useState } from 'react';
import { useSuiteMutations, type Suite } from '../api/suites';
import { mapSuiteErrors, parseImport, refusalText } from '../lib/editor';

export function ImportSuite({ onImported }: { onImported: (suite: Suite) => void }) {
  const { save } = useSuiteMutations();
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);

  const onFile = async (file: File | undefined) => {
    if (!file) return;
    setError(null);
    const r = parseImport(await file.text());
    // The same file may be picked again (after fixing it).
    if (input.current) input.current.value = '';
    if ('error' in r) {
      setError(`${file.name}: ${r.error}`);
      return;
    }
    save.mutate(r.body, {
      onSuccess: onImported,
      onError: (err) => setError(`${file.name} was refused: ${refusalText(mapSuiteErrors(err))}`),
    });
  };

  return (
    <div className="field suite-import">
      <label htmlFor="suite-import">Import a suite (JSON file)</label>
      <input ref={input} id="suite-import" type="file" accept="application/json,.json" disabled={save.isPending} onChange={(e) => void onFile(e.target.files?.[0])} />
      {error ? (
        <p className="field-error" role="alert">
          Not imported: {error}
        </p>
      ) : null}
    </div>
  );
}
