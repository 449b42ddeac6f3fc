// CSV as RFC 4180 writes it: comma-separated, CRLF-free (\n), fields quoted when they hold a comma,
// quote or line break, quotes doubled. Numbers are written in full precision, never localised.

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export type CsvValue = string | number | boolean | null | undefined;

export function csvField(v: CsvValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  const s = String(v);
  // A leading =, +, -, @, tab or carriage return makes a spreadsheet evaluate the cell: prefix it with a quote,
  // unless the whole text is a number (a negative figure stays a figure). The server's CSV follows the same rule
  // (backend/app/core/csvcell.py).
  const safe = /^[=+\-@\t\r]/.test(s) && !NUMBER.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(rows: readonly (readonly CsvValue[])[]): string {
  return rows.map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}
