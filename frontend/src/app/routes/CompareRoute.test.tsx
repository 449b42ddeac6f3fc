import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('chart.js', async () => (await import('../../test/chart-mock')).chartJsMock());

import { chartSpies } from '../../test/chart-mock';
import { host, resultRow, run, sample } from '../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../test/render';
import { CompareRoute } from './CompareRoute';

const trace = (id: number, mean: number) =>
  run({ id, experiment: 'cpu_trace', status: 'succeeded', result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean })], trace: { n: 3, min: mean - 1, mean, max: mean + 1, stddev: 1, throttle: null, stretches: [], flags: [] } } });

function serve(runs: ReturnType<typeof run>[]) {
  const fetchMock = vi.fn(async (req: Request) => {
    const url = new URL(req.url);
    if (url.pathname === '/api/hosts') return jsonResponse({ data: [host], count: 1 });
    if (url.pathname === '/api/runs' && url.searchParams.get('ids')) {
      const ids = url.searchParams.get('ids')!.split(',').map(Number);
      const data = runs.filter((r) => ids.includes(r.id));
      return jsonResponse({ data, count: data.length });
    }
    if (url.pathname === '/api/runs') return jsonResponse({ data: runs, count: runs.length });
    const m = /^\/api\/runs\/(\d+)\/samples$/.exec(url.pathname);
    if (m) return jsonResponse({ data: [sample(0), sample(1), sample(2)], count: 3 });
    return jsonResponse({ detail: 'not found' }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

beforeEach(() => chartSpies.reset());
afterEach(() => vi.unstubAllGlobals());

describe('CompareRoute', () => {
  it('loads the runs named in the URL and shows bars and ratios against the baseline', async () => {
    serve([run({ id: 1, status: 'succeeded', result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 50 })] } }), run({ id: 2, status: 'succeeded', result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 60 })] } })]);
    renderWithProviders(<CompareRoute />, { route: '/compare?runs=1,2&baseline=2' });
    const table = await screen.findByRole('table', { name: /Ratio to baseline run #2/ });
    const row = within(table).getByRole('row', { name: /FP64 FLOPS · 1 thread/ });
    expect(row).toHaveTextContent('0.833×');
    expect(row).toHaveTextContent('1.00× (baseline)');
    expect(screen.getByRole('figure', { name: /Side by side \(GFLOP\/s\)/ })).toHaveAttribute('data-bars', '2');
    expect(screen.getByRole('radio', { name: /#2/ })).toBeChecked();
    expect(screen.queryByRole('figure', { name: /Traces overlaid/ })).not.toBeInTheDocument();
  });

  it('overlays trace runs from their stored samples', async () => {
    const fetchMock = serve([trace(3, 40), trace(4, 45)]);
    renderWithProviders(<CompareRoute />, { route: '/compare?runs=3,4' });
    const overlay = await screen.findByRole('figure', { name: /Traces overlaid/ });
    await vi.waitFor(() => expect(overlay).toHaveAttribute('data-points', '6'));
    expect(overlay).toHaveAttribute('data-traces', '2');
    const paths = fetchMock.mock.calls.map(([r]) => new URL((r as Request).url).pathname);
    expect(paths).toEqual(expect.arrayContaining(['/api/runs/3/samples', '/api/runs/4/samples']));
    const lineChart = chartSpies.instances.find((c) => c.type === 'line')!;
    expect(lineChart.options).toMatchObject({ parsing: false, normalized: true, animation: false });
    expect((lineChart.options.plugins as { decimation: object }).decimation).toMatchObject({ enabled: true, algorithm: 'lttb' });
  });

  it('downloads the comparison as CSV built from the loaded runs', async () => {
    serve([run({ id: 1, status: 'succeeded', result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 50 })] } }), run({ id: 2, status: 'succeeded', result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow({ mean: 60 })] } })]);
    renderWithProviders(<CompareRoute />, { route: '/compare?runs=1,2' });
    // the real download path: a Blob behind an object URL, clicked through a link named for the file
    const blobs: Blob[] = [];
    class BlobURL extends URL {
      static override createObjectURL(b: Blob) { blobs.push(b); return 'blob:compare'; }
      static override revokeObjectURL() { /* the test keeps the Blob */ }
    }
    vi.stubGlobal('URL', BlobURL);
    const clicked: HTMLAnchorElement[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) { clicked.push(this); });
    await userEvent.click(await screen.findByRole('button', { name: 'Download comparison CSV' }));
    expect(clicked.map((a) => [a.download, a.getAttribute('href')])).toEqual([['hostbench-compare-1-2.csv', 'blob:compare']]);
    expect(blobs).toHaveLength(1);
    expect(blobs[0]!.type).toBe('text/csv;charset=utf-8');
    const text = await new Promise<string>((resolve) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result as string);
      reader.readAsText(blobs[0]!);
    });
    expect(text.split('\n')[1]).toContain('run_id,host,experiment,baseline,op,block_bytes,threads,unit');
    expect(text).toContain(',GFLOP/s,');
  });

  it('asks for runs when none are picked, and says which are missing or unfinished', async () => {
    serve([run({ id: 1, status: 'running' })]);
    const { unmount } = renderWithProviders(<CompareRoute />, { route: '/compare' });
    expect(screen.getByText(/Pick two or more runs to compare/)).toBeInTheDocument();
    unmount();
    renderWithProviders(<CompareRoute />, { route: '/compare?runs=1,99' });
    expect(await screen.findByText(/None of these runs has a result yet/)).toBeInTheDocument();
    expect(screen.getByText(/Not compared yet \(no result\): #1 \(running\)/)).toBeInTheDocument();
    expect(screen.getByRole('radio', { name: /#99 not found/ })).toBeInTheDocument();
  });

  it('shows an API error as text', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ detail: 'database down' }, 503)));
    renderWithProviders(<CompareRoute />, { route: '/compare?runs=1,2' });
    expect(await screen.findByRole('alert', {}, { timeout: 5000 })).toHaveTextContent('Could not load the runs: database down');
  });
});
