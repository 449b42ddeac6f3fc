import { describe, expect, it } from 'vitest';
import { actionLabel, detailSummary } from './detail';

describe('audit detail', () => {
  it('lists the fields on one line, skipping empty ones', () => {
    expect(detailSummary({ history: 'keep', note: null, ids: [1, 2] })).toBe('history=keep · ids=[1,2]');
    expect(detailSummary({})).toBe('');
    expect(detailSummary(null)).toBe('');
  });
  it('reads an action name as words', () => {
    expect(actionLabel('host.rotate_credential')).toBe('host rotate credential');
  });
});
