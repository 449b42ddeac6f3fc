import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import type { Mesh, MeshCell } from '../api/meshes';
import { MeshMatrix } from './MeshMatrix';

const cell = (server: number, client: number, mbps: number, verdict: MeshCell['verdict'], validity = 'valid'): MeshCell => ({
  server_host_id: server, client_host_id: client, round: 0, status: 'succeeded', mbps, rtt_us: 25, share: null,
  stream_run_id: 10 + server + client, rr_run_id: null, validity, verdict, verdict_reason: 'why',
});

const MESH: Mesh = {
  id: 4, created_at: '2026-11-29T03:00:00Z', created_by: 'a', mode: 'all_pairs', server: null, ops: ['tcp_stream', 'tcp_rr'],
  params: {}, rounds: 3, status: 'done', runs: { succeeded: 12 }, wall_s: 30, aggregate_mbps: null, overlap_s: null,
  hosts: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }, { id: 3, name: 'c' }],
  cells: [cell(2, 1, 900, 'NO BASELINE'), cell(3, 1, 90, 'NO BASELINE'), cell(3, 2, 1000, 'DISTURBED', 'disturbed')],
  slowest_link: { server_host_id: 3, client_host_id: 1, mbps: 90 },
  slowest_host: { host_id: 1, name: 'a', mean_mbps: 495 },
};

describe('MeshMatrix', () => {
  it('shows each link, outlines and names the slowest, and says each verdict', () => {
    renderWithProviders(<MeshMatrix mesh={MESH} runPath={(id) => `/runs/${id}`} />);
    expect(screen.getByText(/Slowest link:/)).toHaveTextContent('Slowest link: a → c, 90 Mbit/s');
    expect(screen.getByText(/Slowest host:/)).toHaveTextContent('a');
    const slow = screen.getByTestId('cell-1-3');
    expect(slow).toHaveClass('mesh-slowest');
    expect(slow).toHaveTextContent('90 Mbit/s');
    expect(within(slow).getByRole('link', { name: 'run' })).toHaveAttribute('href', '/runs/14');
    expect(screen.getByTestId('cell-1-2')).not.toHaveClass('mesh-slowest');
    expect(screen.getByTestId('cell-2-3')).toHaveTextContent('DISTURBED');
    expect(screen.getByTestId('cell-2-3')).toHaveTextContent('disturbed');
    expect(screen.getAllByText('NO BASELINE')).toHaveLength(2);
    expect(screen.getByRole('link', { name: 'Download CSV' })).toHaveAttribute('href', expect.stringMatching(/\/api\/meshes\/4\/export\?format=csv$/));
  });
});
