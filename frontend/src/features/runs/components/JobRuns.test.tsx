import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cpuExperiment, networkPairExperiment, run } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { JobRuns } from './JobRuns';

afterEach(() => vi.unstubAllGlobals());

function stubRuns(data: unknown[]) {
  const fetchMock = vi.fn(async (_req: Request) => jsonResponse({ data, count: data.length }));
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

describe('JobRuns', () => {
  it("lists a two-host job's serve and drive runs with their roles and hosts, this run unlinked", async () => {
    const serve = run({ id: 7, job_id: 3, experiment: 'network_serve', host_name: 'bench-a', status: 'succeeded' });
    const drive = run({ id: 8, job_id: 3, experiment: 'network_drive', host_name: 'bench-b', status: 'running' });
    const fetchMock = stubRuns([drive, serve]);
    renderWithProviders(<JobRuns run={drive} experiments={[cpuExperiment, networkPairExperiment]} />);
    const table = await screen.findByRole('table', { name: 'Runs of job #3' });
    const rows = within(table).getAllByRole('row');
    expect(rows.map((r) => r.textContent)).toEqual(['RunRoleHostStatus', '#7servesbench-asucceeded', '#8 (this run)drivesbench-brunning']);
    expect(within(table).getByRole('link', { name: '#7' })).toHaveAttribute('href', '/runs/7');
    const url = new URL((fetchMock.mock.calls[0]?.[0] as Request).url);
    expect(url.searchParams.get('job_id')).toBe('3');
  });

  it('shows each run by its experiment while the experiments are unknown', async () => {
    const serve = run({ id: 7, job_id: 3, experiment: 'network_serve', host_name: 'bench-a' });
    const drive = run({ id: 8, job_id: 3, experiment: 'network_drive', host_name: 'bench-b' });
    stubRuns([serve, drive]);
    renderWithProviders(<JobRuns run={drive} experiments={undefined} />);
    const table = await screen.findByRole('table', { name: 'Runs of job #3' });
    expect(within(table).getAllByRole('row')[1]).toHaveTextContent('network_serve');
  });

  it('shows nothing for a job of one run', async () => {
    const only = run({ id: 9, job_id: 4 });
    const fetchMock = stubRuns([only]);
    renderWithProviders(<JobRuns run={only} experiments={[cpuExperiment]} />);
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalled());
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
  });
});
