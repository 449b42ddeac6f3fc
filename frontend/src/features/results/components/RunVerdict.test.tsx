import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { resultRow } from '../../../test/fixtures';
import { MatrixCell } from './MatrixTable';
import { RunVerdict } from './RunVerdict';

const over = { kind: 'oversubscribed' as const, severity: 'caution' as const, text: 'oversubscribed: 4 threads on 2 CPUs; each thread could have at most 2/4 of a CPU (CPU share 0.34)', value: 0.34 };
const dist = { kind: 'disturbed' as const, severity: 'caution' as const, text: 'disturbed: CPU share 0.70 in repeat 1 (below 0.90)', value: 0.7 };
const above = { kind: 'above_peak' as const, severity: 'invalid' as const, text: 'repeat 1: 90.00 GFLOP/s is above the theoretical peak 58.40 GFLOP/s', value: 90 };

describe('RunVerdict', () => {
  it('puts the verdict first and every reason in words, with the row it belongs to', () => {
    const result = {
      unit: 'GFLOP/s', verdict: 'oversubscribed' as const, flags: [],
      rows: [resultRow({ threads: 2 }), resultRow({ threads: 4, verdict: 'oversubscribed', flags: [over, dist] })],
    };
    render(<RunVerdict result={result} />);
    const box = screen.getByRole('region', { name: 'Verdict' });
    expect(box).toHaveAttribute('data-verdict', 'oversubscribed');
    expect(within(box).getByText('oversubscribed')).toHaveClass('badge-warn');
    expect(box).toHaveTextContent('FP64 FLOPS, 4 threads: oversubscribed: 4 threads on 2 CPUs');
    expect(box).toHaveTextContent('FP64 FLOPS, 4 threads: disturbed: CPU share 0.70');
    expect(within(box).queryByText('valid')).toBeNull();
  });

  it('says valid only when nothing is known against the figures, naming only what was checked', () => {
    const checked = ['threads ≤ CPUs', 'run-queue wait ≤ 10% in every repeat', 'UDP loss ≤ 1 %', 'the peer\'s CPU: not checked'];
    render(<RunVerdict result={{ unit: 'Mbit/s', verdict: 'valid', flags: [], rows: [resultRow()], checked }} />);
    const box = screen.getByRole('region', { name: 'Verdict' });
    expect(within(box).getByText('valid')).toHaveClass('badge-ok');
    expect(box).toHaveTextContent('checked: threads ≤ CPUs; run-queue wait ≤ 10% in every repeat; UDP loss ≤ 1 %');
    expect(box).not.toHaveTextContent('the kernel kept its CPUs'); // a network run's verdict never claims it
  });

  it('says what waiting for a quiet CPU and repeating disturbed phases cost', () => {
    const busy = { phases: 4, waited_s: 12.34, tries: 7, retried_phases: 2, never_quiet: 1 };
    render(<RunVerdict result={{ unit: 'GFLOP/s', verdict: 'valid', flags: [], rows: [resultRow()], busy }} />);
    expect(screen.getByRole('region', { name: 'Verdict' })).toHaveTextContent(
      'Busy host: waited 12.3 s for a quiet CPU over 4 phases; 1 never quiet; 7 tries (2 phases measured again: disturbed).',
    );
  });

  it('names the new verdicts in a word', () => {
    for (const [verdict, word] of [['lossy', 'lossy'], ['page_cache', 'page cache'], ['same_machine', 'same machine'], ['loopback', 'loopback'], ['unstable', 'unstable']] as const) {
      const { unmount } = render(<RunVerdict result={{ unit: 'MB/s', verdict, flags: [], rows: [resultRow()] }} />);
      expect(within(screen.getByRole('region', { name: 'Verdict' })).getByText(word)).toHaveClass('badge-warn');
      unmount();
    }
  });

  it('marks a wrong figure invalid, in red', () => {
    render(<RunVerdict result={{ unit: 'GFLOP/s', verdict: 'invalid', flags: [], rows: [resultRow({ verdict: 'invalid', valid: false, flags: [above] })] }} />);
    expect(within(screen.getByRole('region', { name: 'Verdict' })).getByText('invalid')).toHaveClass('badge-bad');
  });
});

describe('MatrixCell verdict', () => {
  it('shows a disturbed cell as disturbed with its CPU share visible, never as valid', () => {
    render(
      <table>
        <tbody>
          <tr>
            <MatrixCell row={resultRow({ verdict: 'disturbed', flags: [dist] })} />
          </tr>
        </tbody>
      </table>,
    );
    const cell = screen.getByRole('cell');
    expect(cell).toHaveAttribute('data-verdict', 'disturbed');
    expect(cell).toHaveClass('cell-caution');
    expect(within(cell).getByText('disturbed')).toHaveClass('badge');
    expect(within(cell).getByText(/CPU share 0\.70/)).toBeVisible();
    expect(within(cell).queryByText('valid')).toBeNull();
  });
});

describe('CI text', () => {
  it('says why there is no interval', async () => {
    const { ciText } = await import('./MatrixTable');
    expect(ciText({ ci95_low: 1, ci95_high: 2, n: 3 }, 1)).toBe('1.0 – 2.0');
    expect(ciText({ ci95_low: null, ci95_high: null, n: 1 }, 1)).toBe('— (one repeat)');
    expect(ciText({ ci95_low: null, ci95_high: null, n: 3 }, 1)).toMatch(/spread too wide/);
  });
});

describe('reference badges', () => {
  it('puts sockperf before ping, names ping as context, and says why ours can exceed iperf3', async () => {
    const { ReferenceBadges, orderedReferences } = await import('../../../components/ResultBadges');
    const refs = [
      { tool: 'ping', status: 'ok' as const, value: 20000, unit: 'RT/s', ratio: 3.1, metric: 'round_trips_per_s', argv: [] },
      { tool: 'sockperf', status: 'ok' as const, value: 70000, unit: 'RT/s', ratio: 0.98, metric: 'round_trips_per_s', argv: [] },
    ];
    expect(orderedReferences(refs).map((r) => r.tool)).toEqual(['sockperf', 'ping']);
    const { container } = render(<ReferenceBadges row={resultRow({ references: refs })} />);
    expect(container).toHaveTextContent(/^0\.98× sockperf \(70,000 RT\/s\).*3\.1× ping \(20,000 RT\/s\) \(ICMP, context only\)$/);
    const iperf = [{ tool: 'iperf3', status: 'ok' as const, value: 4500, unit: 'Mbit/s', ratio: 2.09, metric: 'received_mbps', argv: [] }];
    render(<ReferenceBadges row={resultRow({ references: iperf })} />);
    expect(screen.getByText(/why ours can exceed iperf3: .*SO_RCVLOWAT/)).toBeVisible();
  });
});
