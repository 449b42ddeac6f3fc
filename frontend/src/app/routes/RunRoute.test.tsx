// The run page by role: Cancel only for operator and admin (a viewer sees the run and who started it);
// who created and who cancelled a run is shown.
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cpuExperiment, networkPairExperiment, operator, resultRow, run, viewer } from '../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../test/render';
import { RunRoute } from './RunRoute';

vi.mock('chart.js', async () => (await import('../../test/chart-mock')).chartJsMock());

// The page opens the live stream; here it never delivers, so the page shows the fetched run.
class SilentEventSource {
  readyState = 0;
  onopen = null;
  onerror = null;
  addEventListener() {}
  close() {}
}

beforeEach(() => vi.stubGlobal('EventSource', SilentEventSource));
afterEach(() => vi.unstubAllGlobals());

function serve(body = run({ status: 'running', created_by: 'otto' })) {
  const fetchMock = vi.fn(async (req: Request) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/runs/7/cancel') return jsonResponse({ ...body, status: 'cancelled', cancelled_by: 'otto' }, 202);
    if (path === '/api/runs/7') return jsonResponse(body);
    if (path === '/api/runs') return jsonResponse({ data: [body], count: 1 });
    return jsonResponse({ detail: 'not found' }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

const page = (me: typeof viewer) =>
  renderWithProviders(
    <Routes>
      <Route path="/runs/:id" element={<RunRoute />} />
    </Routes>,
    { route: '/runs/7', me },
  );

describe('RunRoute by role', () => {
  it('says a stored result is being recomputed after its host\'s peaks changed', async () => {
    serve(run({ status: 'succeeded', result_updating: true, result: { verdict: 'valid', flags: [], unit: 'GFLOP/s', rows: [resultRow()] } }));
    page(viewer);
    expect(await screen.findByText(/the result is being recomputed/, {}, { timeout: 10_000 })).toBeInTheDocument();
  });

  it('a viewer sees the run and who created it, but no Cancel', async () => {
    serve();
    page(viewer);
    expect(await screen.findByRole('region', { name: 'Run details' }, { timeout: 10_000 })).toHaveTextContent('Created byotto');
    expect(screen.queryByRole('button', { name: 'Cancel run' })).not.toBeInTheDocument();
  });

  it('an operator cancels, and the page then says who cancelled', async () => {
    const fetchMock = serve();
    const user = userEvent.setup();
    page(operator);
    await user.click(await screen.findByRole('button', { name: 'Cancel run' }, { timeout: 10_000 }));
    await user.click(within(screen.getByRole('dialog', { name: 'Cancel run #7?' })).getByRole('button', { name: 'Cancel the run' }));
    const req = fetchMock.mock.calls.map(([r]) => r).find((r) => r.method === 'POST') as Request;
    expect(new URL(req.url).pathname).toBe('/api/runs/7/cancel');
    expect(await screen.findByText('Cancelled by')).toBeInTheDocument();
    expect(screen.getByRole('region', { name: 'Run details' })).toHaveTextContent('Cancelled byotto');
  });

  it('a refused cancel is shown, with the role in words', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async (req: Request) => {
        if (req.method === 'POST') return jsonResponse({ detail: 'this needs the operator role; otto is viewer' }, 403);
        if (new URL(req.url).pathname === '/api/runs') return jsonResponse({ data: [], count: 0 });
        return jsonResponse(run({ status: 'running' }));
      }),
    );
    const user = userEvent.setup();
    // The hook said operator (say, the role was lowered a moment ago); the server is the authority.
    page(operator);
    await user.click(await screen.findByRole('button', { name: 'Cancel run' }, { timeout: 10_000 }));
    await user.click(within(screen.getByRole('dialog', { name: 'Cancel run #7?' })).getByRole('button', { name: 'Cancel the run' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Cancel failed: Your role (operator) cannot do this: this needs the operator role; otto is viewer');
  });
});

describe('RunRoute: a run of a two-host job', () => {
  function serveRuns(body: ReturnType<typeof run>, partner: ReturnType<typeof run>) {
    vi.stubGlobal(
      'fetch',
      vi.fn(async (req: Request) => {
        const path = new URL(req.url).pathname;
        if (path === '/api/experiments') return jsonResponse({ data: [cpuExperiment, networkPairExperiment] });
        if (path === '/api/runs') return jsonResponse({ data: [body, partner], count: 2 });
        return jsonResponse(body);
      }),
    );
  }

  it('a serving run says it records no samples, and the job lists both roles (from the experiment\'s roles)', async () => {
    const serving = run({ id: 7, job_id: 3, experiment: 'network_serve', unit: 'Mbit/s' });
    serveRuns(serving, run({ id: 8, job_id: 3, experiment: 'network_drive', host_name: 'bench-b', unit: 'Mbit/s' }));
    page(viewer);
    expect(await screen.findByText(/A serving run listens and records no samples/, undefined, { timeout: 10_000 })).toBeInTheDocument();
    const table = await screen.findByRole('table', { name: 'Runs of job #3' });
    expect(within(table).getAllByRole('row').map((r) => r.textContent)).toEqual([
      'RunRoleHostStatus', '#7 (this run)servesbench-arunning', '#8drivesbench-brunning',
    ]);
  });

  it('a driving run waits for its samples like any other', async () => {
    const driving = run({ id: 7, job_id: 3, experiment: 'network_drive', unit: 'Mbit/s' });
    serveRuns(driving, run({ id: 6, job_id: 3, experiment: 'network_serve', host_name: 'bench-b', unit: 'Mbit/s' }));
    page(viewer);
    expect(await screen.findByText('Waiting for the first sample…', undefined, { timeout: 10_000 })).toBeInTheDocument();
    expect(screen.queryByText(/A serving run listens/)).not.toBeInTheDocument();
  });
});
