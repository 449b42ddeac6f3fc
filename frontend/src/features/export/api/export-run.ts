// GET /api/runs/{id}/export?format=csv|json — the server writes the file (result rows with units,
// every sample) and names it; the browser downloads it through a plain link, so nothing large passes
// through JavaScript.
import { apiUrl } from '../../../config/env';

export type ExportFormat = 'csv' | 'json';

export function exportRunUrl(id: number, format: ExportFormat): string {
  return apiUrl(`/api/runs/${id}/export?format=${format}`);
}

export function exportRunFileName(id: number, format: ExportFormat): string {
  return `hostbench-run-${id}.${format}`;
}
