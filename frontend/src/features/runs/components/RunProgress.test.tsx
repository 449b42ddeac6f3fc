import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { run } from '../../../test/fixtures';
import { RunProgress, stoppedAt } from './RunProgress';

describe('RunProgress of a run that did not finish', () => {
  it('a cancelled run says how far it got, never 100 %', () => {
    const r = run({ status: 'cancelled', progress: 1, started_at: '2026-11-01T10:00:00Z', finished_at: '2026-11-01T10:00:12Z', expected_duration_s: 30 });
    expect(stoppedAt(r)).toEqual({ fraction: 0.4, text: 'cancelled after 12 s of an expected 30 s (about 40 %)' });
    render(<RunProgress run={r} />);
    expect(screen.getAllByText(/cancelled after 12 s/).length).toBeGreaterThan(0);
    expect(screen.queryByText(/100 %/)).toBeNull();
  });

  it('a run that failed before it started says so; a succeeded one is 100 %', () => {
    expect(stoppedAt(run({ status: 'failed', started_at: null, progress: 1 }))?.text).toBe('failed before it started');
    render(<RunProgress run={run({ status: 'succeeded', progress: 1 })} />);
    expect(screen.getAllByText('100 %').length).toBeGreaterThan(0);
  });
});
