// Reference-tool outputs imported into a host's history (`./hostbench parse TOOL FILE --import --host ...`,
// GET /api/reference/imports): one row each, marked "imported", with the tool, the file and who brought it.
// The figures are the server's reading of the uploaded output, shown with their units.
import type { paths } from '../../../lib/api/schema';
import { formatDateTime } from '../../../lib/format';
import { withUnit } from '../../../lib/units';

export type ImportedRow =
  paths['/api/reference/imports']['get']['responses'][200]['content']['application/json']['data'][number];

/** The first few metrics of an imported output, "name value unit", joined. */
export function importedSummary(row: ImportedRow, max = 3): string {
  const parts = row.metrics.slice(0, max).map((m) => {
    const name = typeof m.name === 'string' ? m.name : '';
    const value = typeof m.value === 'number' ? withUnit(m.value, typeof m.unit === 'string' ? m.unit : '') : '—';
    return `${name} ${value}`.trim();
  });
  const more = row.metrics.length > max ? ` (+${row.metrics.length - max} more)` : '';
  return (parts.join(' · ') || '—') + more;
}

export function ImportedBadge() {
  return (
    <span className="badge badge-info" title="Reference-tool output imported from a file, not a run of hostbench">
      imported
    </span>
  );
}

export function ImportedRowsTable({ rows }: { rows: ImportedRow[] }) {
  if (rows.length === 0) return null;
  return (
    <div className="table-scroll">
      <table className="table runs-table">
        <caption className="visually-hidden">Imported reference outputs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Import</th>
            <th scope="col">Tool</th>
            <th scope="col">Host</th>
            <th scope="col">File</th>
            <th scope="col">Result</th>
            <th scope="col">Imported</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <th scope="row">
                #{r.id} <ImportedBadge />
              </th>
              <td>
                {r.tool} <span className="muted small">({r.format})</span>
              </td>
              <td>{r.host_name}</td>
              <td className="small">{r.file_name ?? '—'}</td>
              <td className="small">{importedSummary(r)}</td>
              <td className="nowrap">
                {formatDateTime(r.imported_at)} <span className="muted small block">by {r.imported_by}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
