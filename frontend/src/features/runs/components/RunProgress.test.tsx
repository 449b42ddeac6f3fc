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

describe('RunProgress of a running run: the usual time, the cap apart, the phase', () => {
  it('counts down from the typical duration and names the cap', async () => {
    const { timeLeft } = await import('./RunProgress');
    const r = run({ status: 'running', progress: 0.5, started_at: '2026-11-01T10:00:00Z', expected_duration_s: 614, typical_duration_s: 16 });
    expect(timeLeft(r, Date.parse('2026-11-01T10:00:08Z'))).toBe(8);
  });

  it('says which reference tool runs, what it runs and about how long it has left', async () => {
    const { phaseText } = await import('./RunProgress');
    const phase = { kind: 'reference' as const, tool: 'hpcc', what: 'HPL N = 20,000, 2 processes', index: 3, of: 8, started_at: 1_800_000_000, typical_s: 100, cap_s: 600 };
    expect(phaseText(phase, 1_800_000_030_000)).toBe('hpcc running (reference 3 of 8): HPL N = 20,000, 2 processes · about 1 min 10 s left; stopped at 10 min');
    expect(phaseText(phase, 1_800_000_130_000)).toBe('hpcc running (reference 3 of 8): HPL N = 20,000, 2 processes · past its usual 1 min 40 s; stopped at 10 min');
    expect(phaseText({ kind: 'kernel', what: 'cpu kernel, fp64', started_at: 1_800_000_000 }, 1_800_000_001_000)).toBe('cpu kernel, fp64: measuring');
    expect(phaseText(null, 0)).toBeNull();
  });

  it('shows the phase under the progress bar while the run is on', () => {
    const phase = { kind: 'reference' as const, tool: 'sockperf', what: 'sockperf ping-pong TCP, 14 B', index: 1, of: 6, started_at: Date.now() / 1000, typical_s: 5, cap_s: 34 };
    render(<RunProgress run={run({ status: 'running', progress: 0.9, started_at: new Date().toISOString(), expected_duration_s: 330, typical_duration_s: 60, phase })} />);
    expect(screen.getByRole('status')).toHaveTextContent(/^sockperf running \(reference 1 of 6\): sockperf ping-pong TCP, 14 B · about \d+ s left; stopped at 34 s$/);
    expect(screen.getByText(/left of 1 min, cap 5 min 30 s/)).toBeInTheDocument();
  });
});
