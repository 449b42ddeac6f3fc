import { describe, expect, it } from 'vitest';
import { mapServerIssues } from './server-errors';

const names = ['op', 'threads', 'repeats', 'duration_s', 'warmup_s'];

describe('mapServerIssues', () => {
  it('puts a param issue on the field its loc names, with or without the union tag', () => {
    const m = mapServerIssues(
      [
        { loc: ['body', 'params', 'repeats'], msg: 'Input should be less than or equal to 100' },
        { loc: ['body', 'cpu', 'params', 'threads', 2], msg: 'Input should be greater than or equal to 1' },
      ],
      names,
    );
    expect(m.fields).toEqual({ repeats: 'Input should be less than or equal to 100', threads: 'Input should be greater than or equal to 1' });
    expect(m.form).toEqual([]);
  });

  it('maps host_ids, and keeps issues that name no field as form errors', () => {
    const m = mapServerIssues(
      [
        { loc: ['body', 'host_ids'], msg: 'host ids must be distinct' },
        { loc: ['body', 'params', 'bogus'], msg: 'Extra inputs are not permitted' },
      ],
      names,
    );
    expect(m.fields).toEqual({ host_ids: 'host ids must be distinct' });
    expect(m.form).toEqual(['params.bogus: Extra inputs are not permitted']);
  });
});
