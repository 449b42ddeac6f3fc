import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { networkPairExperiment, resultRow } from '../../../test/fixtures';
import { axesOf } from '../../../lib/axes';
import { groupMatrix } from '../../../lib/matrix';
import { MatrixTable } from './MatrixTable';

const KiB = 1024;
const MiB = 1024 ** 2;
const table = (rows: Parameters<typeof groupMatrix>[0], peakNote?: string) => render(<MatrixTable matrix={groupMatrix(rows)[0]!} peakNote={peakNote} />);

describe('MatrixTable (CPU: threads only)', () => {
  it('shows the backend mean ± stddev with its unit, efficiency and validity next to it', () => {
    table([resultRow(), resultRow({ threads: 2, mean: 104.1, stddev: 1.25, min: 102.9, max: 105.3, efficiency: 0.879 })]);
    const t = screen.getByRole('table', { name: 'FP64 FLOPS: threads → mean ± stddev over repeats (GFLOP/s)' });
    const row1 = within(t).getByRole('row', { name: /^1 / });
    expect(row1).toHaveTextContent('52.35 ± 0.46 GFLOP/s');
    expect(row1).toHaveTextContent('88.4 % of peak');
    expect(within(row1).getByText('valid')).toBeInTheDocument();
    expect(within(row1).getByText('88.4 % of peak')).toHaveAttribute('title', expect.stringContaining('1 core × 3.700 GHz × 16 FLOP/cycle'));
    const row2 = within(t).getByRole('row', { name: /^2 / });
    expect(row2).toHaveTextContent('104.1 ± 1.3');
    expect(row2).toHaveTextContent('87.9 % of peak');
  });

  it('names the clock the CPU peak used, and both clocks when they differ, in the badge title and the details', async () => {
    const formula = '1 core × 3.680 GHz (vector-loaded clock, AVX-512) × 32 FLOP/cycle (2 FMA pipes × 8 fp64 lanes × 2, Zen 5, avx512); '
      + 'the clocks differ: scalar chain 3.980 GHz, vector-loaded 3.680 GHz (-7.5 %)';
    table([resultRow({ mean: 117.3, efficiency: 117.3 / 117.76, peak: { value: 117.76, unit: 'GFLOP/s', formula, source: 'computed' } })]);
    const row = screen.getByRole('row', { name: /^1 / });
    expect(within(row).getByText('99.6 % of peak')).toHaveAttribute('title', expect.stringContaining('(vector-loaded clock, AVX-512)'));
    const summary = within(row).getByText('details');
    await userEvent.click(summary);
    const details = summary.closest('details') as HTMLDetailsElement;
    expect(details).toHaveTextContent('3.680 GHz (vector-loaded clock, AVX-512)');
    expect(details).toHaveTextContent('the clocks differ: scalar chain 3.980 GHz, vector-loaded 3.680 GHz (-7.5 %)');
  });

  it('gives min, max and CI on hover (title) and in details', async () => {
    table([resultRow()]);
    const row = screen.getByRole('row', { name: /^1 / });
    expect(within(row).getByText('52.35 ± 0.46').parentElement).toHaveAttribute('title', 'min 51.9, max 52.8, median 52.3; 95 % CI 51.2 – 53.5 GFLOP/s (n = 3)');
    const summary = within(row).getByText('details');
    await userEvent.click(summary);
    const details = summary.closest('details') as HTMLDetailsElement;
    expect(details.open).toBe(true);
    expect(details).toHaveTextContent('Min51.90');
    expect(details).toHaveTextContent('Max52.80');
    expect(details).toHaveTextContent('95 % CI51.20 – 53.50');
    expect(details).toHaveTextContent('Repeats3: 51.90, 52.30, 52.80');
  });

  it('flags an invalid figure with the backend reason instead of celebrating it', () => {
    table([resultRow({ mean: 80, efficiency: 1.35, valid: false, invalid_reason: 'repeat 1: 80 GFLOP/s is above the theoretical peak' })]);
    const row = screen.getByRole('row', { name: /^1 / });
    expect(within(row).getByText('invalid')).toBeInTheDocument();
    expect(row).toHaveTextContent('above the theoretical peak');
    expect(row).toHaveTextContent('135 % of peak');
    expect(row.querySelector('td')).toHaveClass('cell-invalid');
  });

  it('says why efficiency is missing, and shows the reference tool ratio', () => {
    table(
      [
        resultRow({
          op: 'int32', unit: 'GIOP/s', peak: null, efficiency: null,
          references: [
            { tool: 'hpl', status: 'ok', value: 50, unit: 'GFLOP/s', ratio: 1.04, metric: 'Gflops', argv: [] },
            { tool: 'stream', status: 'unavailable', reason: 'not installed', argv: [] },
          ],
        }),
      ],
      'CPU clock unknown',
    );
    const row = screen.getByRole('row', { name: /^1 / });
    expect(within(row).getByText('peak n/a')).toHaveAttribute('title', 'CPU clock unknown');
    // the reference's own figure is in the row's text, not only in the tooltip (issue 26)
    expect(within(row).getByText('1.04× HPL (50 GFLOP/s)')).toHaveAttribute('title', 'HPL Gflops: 50 GFLOP/s; ours / theirs = 1.04');
    // the reason in words, visibly, as the README promises ("unavailable on this host")
    expect(within(row).getByText('STREAM unavailable on this host: not installed')).toBeVisible();
  });

  it('says in the row why a reference gave no figure, names the nearest size, and lists every reference in the details', () => {
    table([
      resultRow({
        op: 'tcp_rr', unit: 'RT/s', block_bytes: 1,
        references: [
          { tool: 'sockperf', status: 'ok', value: 40000, unit: 'RT/s', ratio: 0.9, metric: 'round_trips_per_s', argv: ['sockperf', 'pp', '-m', '14'],
            note: 'sockperf at 14 B, its smallest message (14-65507 B); this row is 1 B' },
          { tool: 'none', status: 'none', reason: 'no reference tool measures int32: HPL counts floating point', argv: [] },
          { tool: 'likwid-bench', status: 'unavailable', reason: 'likwid-bench is not installed on this host (Debian: apt install likwid)', argv: [] },
        ],
      }),
    ]);
    const row = screen.getByRole('row', { name: /^1 / });
    expect(within(row).getByText('0.9× sockperf (40,000 RT/s)')).toBeVisible();
    expect(within(row).getByText('sockperf at 14 B, its smallest message (14-65507 B); this row is 1 B')).toBeVisible();
    expect(within(row).getByText('No reference tool measures int32: HPL counts floating point')).toBeVisible();
    expect(within(row).getByText(/likwid-bench unavailable on this host: .*apt install likwid/)).toBeVisible();
    const details = within(row).getByText('References').nextElementSibling as HTMLElement;
    expect(details).toHaveTextContent('sockperf: 40,000 RT/s (ours / theirs 0.9) [sockperf at 14 B, its smallest message (14-65507 B); this row is 1 B] sockperf pp -m 14');
    expect(details).toHaveTextContent('no reference tool measures int32: HPL counts floating point');
  });
});

describe('MatrixTable (memory / disk: threads × block size)', () => {
  const rows = [8, 8 * KiB, 8 * MiB, 80 * MiB].flatMap((b, i) => [
    resultRow({ op: 'rand_read', unit: 'MB/s', block_bytes: b, threads: 1, mean: 100 * (i + 1), stddev: 1, peak: null, efficiency: null, extra: { iops: 1000 + i, lat_p99_us: 12.5, cpu_share: 0.99 }, extra_units: { iops: 'IOPS', lat_p99_us: 'µs', cpu_share: '' }, extra_lower_is_better: ['lat_p99_us'] }),
  ]);

  it('has a column per block size, named exactly in binary units', () => {
    table([...rows, resultRow({ op: 'rand_read', unit: 'MB/s', block_bytes: 8, threads: 4, mean: 350, stddev: 3 })]);
    const t = screen.getByRole('table', { name: /Random read: threads × block size → mean ± stddev over repeats \(MB\/s\)/ });
    expect(within(t).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Threads', '8 B', '8 KiB', '8 MiB', '80 MiB']);
    const four = within(t).getByRole('row', { name: /^4 / });
    expect(within(four).getAllByText('not measured')).toHaveLength(3);
  });

  it('shows the headline extras with their units in the cell, and every extra in the details', () => {
    table(rows);
    const row = screen.getByRole('row', { name: /^1 / });
    const first = within(row).getAllByRole('cell')[0] as HTMLElement;
    expect(first).toHaveTextContent('100.0 ± 1.0 MB/s');
    expect(first).toHaveTextContent('IOPS1,000 IOPS');
    expect(first).toHaveTextContent('p99 latency12.5 µs');
    expect(first.querySelector('.extras')).not.toHaveTextContent('CPU share');
    expect(first.querySelector('details')).toHaveTextContent('CPU share0.99');
  });

  it('says when repeat-until-stable hit its cap, and when it met the target', async () => {
    table([resultRow({ stopped_by: 'max_repeats' }), resultRow({ threads: 2, stopped_by: 'stable' })]);
    const capped = screen.getByRole('row', { name: /^1 / });
    expect(within(capped).getByText('not stable')).toBeInTheDocument();
    expect(capped.querySelector('details')).toHaveTextContent('stopped at the repeat cap before the CV target was met');
    const stable = screen.getByRole('row', { name: /^2 / });
    expect(within(stable).queryByText('not stable')).not.toBeInTheDocument();
    expect(stable.querySelector('details')).toHaveTextContent('stopped when the CV target was met');
  });
});

describe('MatrixTable (memory: the cache level of each row)', () => {
  it('badges each cell with the level its working set fits in, DRAM said in words', () => {
    table([
      resultRow({ op: 'read', unit: 'MB/s', block_bytes: 64, threads: 1, level: 'L1' }),
      resultRow({ op: 'read', unit: 'MB/s', block_bytes: 64 * MiB, threads: 1, level: 'DRAM' }),
    ]);
    const row = screen.getByRole('row', { name: /^1 / });
    expect(within(row).getByText('L1')).toHaveAttribute('title', 'The working set fits in L1');
    expect(within(row).getByText('DRAM')).toHaveAttribute('title', 'The working set fits in no cache: it comes from DRAM');
  });

  it('shows no level where the result has none (CPU)', () => {
    table([resultRow()]);
    expect(screen.queryByText(/^(L1|L2|L3|DRAM)$/)).not.toBeInTheDocument();
  });
});

describe('MatrixTable (network: in network terms, issue 32)', () => {
  it('heads a network run streams × message size, not threads × block size, with the words of its experiment', async () => {
    const rows = [
      resultRow({ op: 'tcp_stream', unit: 'Mbit/s', block_bytes: 1, threads: 1, mean: 40 }),
      resultRow({ op: 'tcp_stream', unit: 'Mbit/s', block_bytes: 64 * KiB, threads: 1, mean: 9400 }),
    ];
    const words = axesOf([networkPairExperiment], 'network_drive');
    render(<MatrixTable matrix={groupMatrix(rows)[0]!} axes={words('tcp_stream')} />);
    const t = screen.getByRole('table', { name: 'TCP throughput: streams × message size → mean ± stddev over repeats (Mbit/s)' });
    expect(within(t).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Streams', '1 B', '64 KiB']);
    expect(within(t).getAllByText(/details/)[0]).toHaveTextContent('details for 1 stream, 1 B');
    // UDP sizes are datagrams; a run kind no experiment names keeps the field names
    expect(words('udp_rr').size).toBe('datagram size');
    expect(axesOf([networkPairExperiment], 'gpu')('fp32_fma').counts).toBe('threads');
  });
});
