import { describe, expect, it } from 'vitest';
import { run } from '../../../test/fixtures';
import { queueAhead } from './QueuePosition';

describe('queueAhead', () => {
  it('counts the running run and the older queued ones, not the younger', () => {
    const mine = run({ id: 10, status: 'queued' });
    const ahead = queueAhead(mine, [run({ id: 7, status: 'running' })], [run({ id: 8, status: 'queued' }), mine, run({ id: 12, status: 'queued' })]);
    expect(ahead.map((r) => r.id)).toEqual([7, 8]);
  });
});
