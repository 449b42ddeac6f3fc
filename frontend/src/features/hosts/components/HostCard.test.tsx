import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { host } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { HostCard } from './HostCard';

describe('HostCard', () => {
  it('shows status, inventory, and the backend peaks with their formulas', () => {
    renderWithProviders(<HostCard host={host} now={Date.parse(host.last_seen_at as string) + 30_000} />);
    const card = screen.getByRole('article', { name: 'bench-a' });
    expect(within(card).getByText('online')).toBeInTheDocument();
    expect(card).toHaveTextContent('last seen 30 s ago');
    expect(card).toHaveTextContent('Intel Xeon Platinum 8488C');
    expect(card).toHaveTextContent('1 × 2 × 4'); // sockets × cores (all sockets) × logical CPUs
    expect(within(card).getByRole('list', { name: 'Instruction sets' })).toHaveTextContent('sse2avx2avx512');
    expect(card).toHaveTextContent('4 GiB');
    expect(card).toHaveTextContent('6.1.0-18-amd64');
    const peaks = within(card).getByRole('region', { name: 'Theoretical peaks' });
    expect(peaks).toHaveTextContent('FP64 118.4 GFLOP/s = 2 cores × 3.700 GHz × 16 FLOP/cycle (computed)');
    expect(peaks).toHaveTextContent('INT32 unknown: CPU clock unknown until a CPU run measures it');
    expect(within(card).getByRole('link', { name: 'New job on bench-a' })).toHaveAttribute('href', '/jobs/new?host=1');
  });

  it('shows an offline host as offline and a missing fact as —', () => {
    renderWithProviders(<HostCard host={{ ...host, online: false, inventory: { cpu: { error: 'OSError: /proc/cpuinfo' } } }} now={Date.now()} />);
    const card = screen.getByRole('article', { name: 'bench-a' });
    expect(within(card).getByText('offline')).toBeInTheDocument();
    expect(card).toHaveTextContent('CPU inventory failed on the host: OSError: /proc/cpuinfo');
    expect(card).toHaveTextContent('— × — × —');
  });

  it('shows caches in exact binary units and the platform facts when reported', () => {
    const inventory = {
      ...host.inventory,
      cpu: { ...(host.inventory.cpu as object), l1d_bytes: 48 * 1024, l1i_bytes: 32 * 1024, l2_bytes: 2 * 1024 ** 2, l3_bytes: 105 * 1024 ** 2, vector_bits: 512, fma: true },
      virtualization: { virtualized: true, hypervisor: 'kvm', product_name: 'c7i.large', container: null },
      governor: { governor: 'performance', driver: 'intel_pstate', boost: true },
      disks: [{ name: 'nvme0n1', model: 'Amazon EBS', size_bytes: 100 * 1024 ** 3 }],
    };
    renderWithProviders(<HostCard host={{ ...host, inventory }} now={Date.now()} />);
    const card = screen.getByRole('article', { name: 'bench-a' });
    expect(within(card).getByRole('list', { name: 'Caches' })).toHaveTextContent('L1d 48 KiBL1i 32 KiBL2 2 MiBL3 105 MiB');
    expect(card).toHaveTextContent('Virtualisationkvm · c7i.large');
    expect(card).toHaveTextContent('Governorperformance');
    expect(card).toHaveTextContent('Turbo / boostyes');
    expect(card).toHaveTextContent('Disksnvme0n1 · Amazon EBS · 100 GiB');
    expect(card).toHaveTextContent('NICsnot reported yet');
    expect(within(card).getByRole('link', { name: 'Runs on bench-a' })).toHaveAttribute('href', '/history?host=1');
  });
});
