import { exportRunFileName, exportRunUrl, type ExportFormat } from '../api/export-run';

const FORMATS: { format: ExportFormat; label: string }[] = [
  { format: 'csv', label: 'CSV' },
  { format: 'json', label: 'JSON' },
];

/** Download links for one run's result and samples. */
export function RunExportLinks({ runId }: { runId: number }) {
  return (
    <span className="export-links" role="group" aria-label="Export">
      {FORMATS.map(({ format, label }) => (
        <a key={format} className="button button-small" href={exportRunUrl(runId, format)} download={exportRunFileName(runId, format)}>
          Download {label}
        </a>
      ))}
    </span>
  );
}
