// A host's health-check verdict (PASS, FAIL, DISTURBED, NO_BASELINE, PENDING) as a badge, and a verdict's age in
// words: the Health page and the fleet view show them alike.
const TONE: Record<string, string> = { FAIL: 'bad', DISTURBED: 'warn', NO_BASELINE: 'info', PASS: 'ok', PENDING: 'info' };

export function VerdictBadge({ verdict }: { verdict: string }) {
  return <span className={`badge badge-${TONE[verdict] ?? 'info'}`}>{verdict.replace('_', ' ')}</span>;
}

/** 42 s, 5 min, 3 h, 2 d */
export function ageText(s: number): string {
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}
