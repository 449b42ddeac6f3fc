import { describe, expect, it } from 'vitest';
import type { Schedule } from '../api/schedules';
import { bodyOf, cronText, firingDetail, intervalParts, intervalSeconds, intervalText, recurrenceText, targetText } from './words';

const schedule = (over: Partial<Schedule> = {}): Schedule => ({
  id: 1, title: 'nightly', suite: 'quick', suite_title: 'Quick health check', host_ids: [3, 4], label: null,
  interval_s: null, cron: '0 3 * * *', enabled: true, created_by: 'op', created_at: '2026-11-27T00:00:00Z',
  updated_at: '2026-11-27T00:00:00Z', next_fire_at: '2026-11-28T03:00:00Z', next: [], last_firing: null, ...over,
});

describe('intervalText', () => {
  it('uses the largest whole unit', () => {
    expect(intervalText(300)).toBe('every 5 minutes');
    expect(intervalText(3600)).toBe('every hour');
    expect(intervalText(5400)).toBe('every 90 minutes');
    expect(intervalText(86400)).toBe('every day');
    expect(intervalText(2 * 86400)).toBe('every 2 days');
    expect(intervalText(14 * 86400)).toBe('every 2 weeks');
    expect(intervalText(129600)).toBe('every 36 hours');
    expect(intervalText(301)).toBe('every 301 seconds');
  });
});

describe('cronText', () => {
  it('says the common shapes in words, in UTC', () => {
    expect(cronText('* * * * *')).toBe('every minute');
    expect(cronText('*/15 * * * *')).toBe('every 15 minutes');
    expect(cronText('5 * * * *')).toBe('every hour at minute 5');
    expect(cronText('0 */6 * * *')).toBe('every 6 hours at minute 0');
    expect(cronText('30 2 * * *')).toBe('every day at 02:30 UTC');
    expect(cronText('0 3 * * mon')).toBe('every Monday at 03:00 UTC');
    expect(cronText('0 3 * * 7')).toBe('every Sunday at 03:00 UTC');
    expect(cronText('0 9 * * 1-5')).toBe('Monday to Friday at 09:00 UTC');
    expect(cronText('0 9 * * sat,sun')).toBe('Saturday and Sunday at 09:00 UTC');
    expect(cronText('0 0 1 * *')).toBe('on the 1st of every month at 00:00 UTC');
    expect(cronText('0 0 22 * *')).toBe('on the 22nd of every month at 00:00 UTC');
    expect(cronText('0 0 13 * *')).toBe('on the 13th of every month at 00:00 UTC');
  });
  it('shows any other expression as itself rather than guessing', () => {
    expect(cronText('0 0 1 * mon')).toBe('cron “0 0 1 * mon” (UTC)');
    expect(cronText('0 0 1 1 *')).toBe('cron “0 0 1 1 *” (UTC)');
    expect(cronText('1,2 3 * * *')).toBe('cron “1,2 3 * * *” (UTC)');
    expect(cronText('nonsense')).toBe('cron “nonsense” (UTC)');
  });
  it('recurrenceText picks the interval or the cron expression', () => {
    expect(recurrenceText({ interval_s: 600, cron: null })).toBe('every 10 minutes');
    expect(recurrenceText({ interval_s: null, cron: '0 3 * * *' })).toBe('every day at 03:00 UTC');
  });
});

describe('targets, firings and bodies', () => {
  it('names hosts, or a host that is gone by its id, or the label', () => {
    const names: Record<number, string> = { 3: 'alpha' };
    expect(targetText(schedule(), (id) => names[id])).toBe('alpha, host 4');
    expect(targetText(schedule({ host_ids: null, label: 'region=eu' }), () => undefined)).toBe('hosts labelled region=eu');
  });
  it('says which hosts were left out, or why nothing started', () => {
    const skipped = [{ host_id: 4, name: 'beta', reason: 'busy (a run queued or running)' }];
    expect(firingDetail({ outcome: 'started', reason: null, skipped: [] })).toBe('');
    expect(firingDetail({ outcome: 'started', reason: null, skipped })).toBe('left out: beta: busy (a run queued or running)');
    expect(firingDetail({ outcome: 'skipped', reason: 'no host carries the label a=b', skipped: [] })).toBe('no host carries the label a=b');
    expect(firingDetail({ outcome: 'failed', reason: 'the suite run was refused (429: …)', skipped })).toContain('429');
  });
  it('bodyOf keeps everything but the change, with one target and one recurrence', () => {
    expect(bodyOf(schedule(), { enabled: false })).toEqual({ title: 'nightly', suite: 'quick', enabled: false, host_ids: [3, 4], cron: '0 3 * * *' });
    expect(bodyOf(schedule({ host_ids: null, label: 'a=b', cron: null, interval_s: 900 }))).toEqual({
      title: 'nightly', suite: 'quick', enabled: true, label: 'a=b', interval_s: 900,
    });
  });
  it('intervalParts shows an interval in the largest whole unit, and back', () => {
    expect(intervalParts(172800)).toEqual({ every: '2', unit: 'days' });
    expect(intervalParts(5400)).toEqual({ every: '90', unit: 'minutes' });
    expect(intervalParts(7200)).toEqual({ every: '2', unit: 'hours' });
    for (const s of [300, 5400, 7200, 86400 * 90]) {
      const p = intervalParts(s);
      expect(intervalSeconds(p.every, p.unit)).toBe(s);
    }
  });
  it('intervalSeconds takes positive whole numbers only', () => {
    expect(intervalSeconds('5', 'minutes')).toBe(300);
    expect(intervalSeconds(' 2 ', 'days')).toBe(172800);
    expect(intervalSeconds('0', 'hours')).toBeNull();
    expect(intervalSeconds('1.5', 'hours')).toBeNull();
    expect(intervalSeconds('', 'hours')).toBeNull();
  });
});
