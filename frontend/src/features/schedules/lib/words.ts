// Schedules in words: a recurrence (an interval, or the common shapes of a cron expression; any other is shown as
// the expression), a target, a firing's outcome; and the body that changes one field of a schedule.
import type { Firing, Schedule, ScheduleIn } from '../api/schedules';

const UNITS: readonly [number, string][] = [
  [7 * 86400, 'week'],
  [86400, 'day'],
  [3600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

const plural = (n: number, unit: string) => (n === 1 ? unit : `${n} ${unit}s`);

/** 3600 → "every hour", 5400 → "every 90 minutes": the largest unit the interval is a whole number of. */
export function intervalText(seconds: number): string {
  for (const [size, unit] of UNITS) if (seconds % size === 0) return `every ${plural(seconds / size, unit)}`;
  return `every ${seconds} seconds`;
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const num = (s: string) => (/^\d{1,2}$/.test(s) ? Number(s) : null);
const dayOf = (s: string) => {
  const n = num(s);
  if (n !== null) return n <= 7 ? n % 7 : null;
  const i = DAY_NAMES.indexOf(s.toLowerCase());
  return i >= 0 ? i : null;
};
const two = (n: number) => String(n).padStart(2, '0');
const ordinal = (n: number) => `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`;

/** The weekday field in words, for a single day, a list of days or a range; null for anything else. */
function daysText(field: string): string | null {
  const range = /^(\w+)-(\w+)$/.exec(field);
  if (range) {
    const a = dayOf(range[1] as string);
    const b = dayOf(range[2] as string);
    return a !== null && b !== null ? `${DAYS[a]} to ${DAYS[b]}` : null;
  }
  const days = field.split(',').map(dayOf);
  if (days.some((d) => d === null)) return null;
  const names = days.map((d) => DAYS[d as number] as string);
  return names.length === 1 ? `every ${names[0]}` : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** A cron expression (5 fields, UTC) in words where it has a common shape; else the expression itself. */
export function cronText(expr: string): string {
  const f = expr.trim().split(/\s+/);
  const fallback = `cron “${expr.trim()}” (UTC)`;
  if (f.length !== 5) return fallback;
  const [mi, h, dom, mon, dow] = f as [string, string, string, string, string];
  const step = /^\*\/(\d+)$/.exec(mi);
  if (h === '*' && dom === '*' && mon === '*' && dow === '*') {
    if (mi === '*') return 'every minute';
    if (step) return `every ${plural(Number(step[1]), 'minute')}`;
    if (num(mi) !== null) return `every hour at minute ${num(mi)}`;
    return fallback;
  }
  const m = num(mi);
  const hour = num(h);
  const hstep = /^\*\/(\d+)$/.exec(h);
  if (m !== null && hstep && dom === '*' && mon === '*' && dow === '*') return `every ${plural(Number(hstep[1]), 'hour')} at minute ${m}`;
  if (m === null || hour === null || mon !== '*') return fallback;
  const at = `at ${two(hour)}:${two(m)} UTC`;
  if (dom === '*' && dow === '*') return `every day ${at}`;
  if (dom === '*') {
    const days = daysText(dow);
    return days ? `${days} ${at}` : fallback;
  }
  const d = num(dom);
  if (dow === '*' && d !== null) return `on the ${ordinal(d)} of every month ${at}`;
  return fallback;
}

export function recurrenceText(s: Pick<Schedule, 'interval_s' | 'cron'>): string {
  if (s.interval_s !== null && s.interval_s !== undefined) return intervalText(s.interval_s);
  return s.cron ? cronText(s.cron) : '—';
}

/** Where it runs: the hosts by name (an id where a host is gone), or the label. */
export function targetText(s: Pick<Schedule, 'host_ids' | 'label'>, hostName: (id: number) => string | undefined): string {
  if (s.label) return `hosts labelled ${s.label}`;
  return (s.host_ids ?? []).map((id) => hostName(id) ?? `host ${id}`).join(', ') || '—';
}

export const OUTCOME_BADGE: Record<Firing['outcome'], string> = {
  started: 'badge badge-ok',
  skipped: 'badge badge-warn',
  failed: 'badge badge-bad',
};

/** What a firing did, beyond its outcome: which hosts were left out and why, or why it did nothing. */
export function firingDetail(f: Pick<Firing, 'outcome' | 'reason' | 'skipped'>): string {
  const left = f.skipped.map((x) => `${x.name ?? `host ${x.host_id}`}: ${x.reason}`).join('; ');
  if (f.outcome === 'started') return left ? `left out: ${left}` : '';
  return f.reason ?? left;
}

/** The PUT body that keeps a schedule as it is except for `change` (the enabled toggle, a new title). */
export function bodyOf(s: Schedule, change: Partial<ScheduleIn> = {}): ScheduleIn {
  const target = s.label ? { label: s.label } : { host_ids: s.host_ids ?? [] };
  const when = s.cron ? { cron: s.cron } : { interval_s: s.interval_s ?? 3600 };
  return { title: s.title, suite: s.suite, enabled: s.enabled, ...target, ...when, ...change };
}

/** An interval as the form shows it: in the largest of days, hours, minutes it is a whole number of. */
export function intervalParts(seconds: number): { every: string; unit: 'minutes' | 'hours' | 'days' } {
  if (seconds % 86400 === 0) return { every: String(seconds / 86400), unit: 'days' };
  if (seconds % 3600 === 0) return { every: String(seconds / 3600), unit: 'hours' };
  return { every: String(Math.round(seconds / 60)), unit: 'minutes' };
}

/** The interval form's value and unit as seconds, or null when it is not a positive whole number. */
export function intervalSeconds(value: string, unit: 'minutes' | 'hours' | 'days'): number | null {
  if (!/^\d{1,6}$/.test(value.trim())) return null;
  const n = Number(value);
  return n > 0 ? n * { minutes: 60, hours: 3600, days: 86400 }[unit] : null;
}
