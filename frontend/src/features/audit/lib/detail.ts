// An audit event's detail (a JSON object) on one line: "history=keep · role=operator".
export function detailSummary(detail: unknown): string {
  if (detail === null || detail === undefined) return '';
  if (typeof detail !== 'object') return String(detail);
  return Object.entries(detail as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(' · ');
}

/** "host.revoke" → "host revoke". */
export function actionLabel(action: string): string {
  return action.replace(/[._]/g, ' ');
}
