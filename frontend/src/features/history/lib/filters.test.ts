import { describe, expect, it } from 'vitest';
import { clearFilters, localDayStart, readFilters, toRunsQuery, writeFilters } from './filters';

const q = (s: string) => new URLSearchParams(s);

describe('history filters in the URL', () => {
  it('reads every filter and the page, and drops values the API would refuse', () => {
    const { filters, page } = readFilters(q('host=3&experiment=cpu&status=succeeded&provider=aws&instance_type=c7i.large&region=eu&from=2026-11-01&to=2026-11-20&page=2'));
    expect(filters).toEqual({ host: '3', experiment: 'cpu', status: 'succeeded', provider: 'aws', instance_type: 'c7i.large', region: 'eu', from: '2026-11-01', to: '2026-11-20' });
    expect(page).toBe(2);
    const bad = readFilters(q('host=x&status=done&from=yesterday&page=-4'));
    expect(bad.filters).toMatchObject({ host: '', status: '', from: '' });
    expect(bad.page).toBe(0);
  });

  it('writes a change and goes back to the first page, keeping other parameters', () => {
    expect(writeFilters(q('experiment=cpu&page=3&x=1'), { status: 'failed' }).toString()).toBe('experiment=cpu&x=1&status=failed');
    expect(writeFilters(q('experiment=cpu&page=3'), { experiment: '' }).toString()).toBe('');
    expect(writeFilters(q('experiment=cpu&page=3'), { experiment: 'cpu' }).toString()).toBe('experiment=cpu&page=3');
    expect(writeFilters(q('experiment=cpu'), { page: 1 }).toString()).toBe('experiment=cpu&page=1');
    expect(clearFilters(q('experiment=cpu&page=2&host=1&x=1')).toString()).toBe('x=1');
  });

  it('turns filters into the GET /api/runs query, dates as whole local days', () => {
    const { filters } = readFilters(q('host=3&experiment=cpu_trace&status=succeeded&instance_type=m7i&from=2026-11-01&to=2026-11-20'));
    expect(toRunsQuery(filters, 2, 25)).toEqual({
      limit: 25,
      offset: 50,
      host_id: 3,
      experiment: 'cpu_trace',
      status: 'succeeded',
      instance_type: 'm7i',
      created_after: new Date(2026, 10, 1).toISOString(),
      created_before: new Date(2026, 10, 21).toISOString(),
    });
    expect(toRunsQuery(readFilters(q('')).filters, 0)).toEqual({ limit: 25, offset: 0 });
  });

  it('computes local midnights across month ends', () => {
    expect(localDayStart('2026-11-30', 1)).toBe(new Date(2026, 11, 1).toISOString());
  });
});
