// What a person may do with one suite besides running it: Export (anyone: the JSON of GET /api/suites/{id}, as a
// file), Save as new suite (operators: a copy to edit), Edit and Delete (a saved suite's owner, or an admin; Delete
// asks first). The server decides each; its refusal is shown in words.
import { useState } from 'react';
import { ConfirmDialog } from '../../../components/Dialog';
import { errorMessage } from '../../../lib/api/errors';
import { downloadText } from '../../../lib/download';
import { getSuite, useSuiteMutations, type Suite } from '../api/suites';
import { exportFileName } from '../lib/editor';

export interface SuiteActionsProps {
  suite: Suite;
  canCopy: boolean;
  canEdit: boolean;
  onCopy: (suite: Suite) => void;
  onEdit: (suite: Suite) => void;
}

export function SuiteActions({ suite, canCopy, canEdit, onCopy, onEdit }: SuiteActionsProps) {
  const [exportError, setExportError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const { remove } = useSuiteMutations();

  const exportIt = async () => {
    setExportError(null);
    try {
      // Read again: the file is the suite as the server has it now, in its own format.
      const fresh = await getSuite(suite.id);
      downloadText(`${JSON.stringify(fresh, null, 2)}\n`, exportFileName(suite.id), 'application/json');
    } catch (e) {
      setExportError(errorMessage(e));
    }
  };

  return (
    <>
      <div className="form-actions">
        <button type="button" className="button button-small" onClick={() => void exportIt()} aria-label={`Export ${suite.title}`}>
          Export
        </button>
        {canCopy ? (
          <button type="button" className="button button-small" onClick={() => onCopy(suite)} aria-label={`Save ${suite.title} as a new suite`}>
            Save as new suite
          </button>
        ) : null}
        {canEdit ? (
          <>
            <button type="button" className="button button-small" onClick={() => onEdit(suite)} aria-label={`Edit ${suite.title}`}>
              Edit
            </button>
            <button type="button" className="button button-danger button-small" onClick={() => setConfirming(true)} aria-label={`Delete ${suite.title}`}>
              Delete
            </button>
          </>
        ) : null}
      </div>
      {exportError ? (
        <p className="field-error" role="alert">
          Could not export {suite.title}: {exportError}
        </p>
      ) : null}
      {confirming ? (
        <ConfirmDialog
          title={`Delete ${suite.title}?`}
          confirmLabel="Delete the suite"
          closeLabel="Keep it"
          pending={remove.isPending}
          error={remove.isError ? errorMessage(remove.error) : undefined}
          onClose={() => {
            setConfirming(false);
            remove.reset();
          }}
          onConfirm={() => remove.mutate(suite.id, { onSuccess: () => setConfirming(false) })}
        >
          <p>
            The suite is gone for everyone: nobody can run it again. Its suite runs so far stay, with their results and its title. Export it
            first to keep a copy.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
