// CSV as RFC 4180 writes it: comma-separated, CRLF-free (\n), fields quoted when they hold a comma,
// quote or line break, quotes doubled. Numbers are written in full precision, never localised.

export type CsvValue = string | number | boolean | null | undefined;

export function csvField(v: CsvValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  const s = String(v);
  // A leading =, +, - or @ would make a spreadsheet evaluate the cell; prefix it with a quote.
  const safe = /^[=+\-@]/.test(s) && !/^-?\d/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(rows: readonly (readonly CsvValue[])[]): string {
  return rows.map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}
