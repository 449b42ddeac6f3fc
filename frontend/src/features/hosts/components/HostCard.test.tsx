import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { host } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { HostCard } from './HostCard';

const operator = { operate: true, administer: false };

describe('HostCard', () => {
  it('shows status, inventory, and the backend peaks with their formulas', () => {
    renderWithProviders(<HostCard host={host} now={Date.parse(host.last_seen_at as string) + 30_000} can={operator} />);
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
    renderWithProviders(<HostCard host={{ ...host, online: false, inventory: { cpu: { error: 'OSError: /proc/cpuinfo' } } }} now={Date.now()} can={operator} />);
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
    renderWithProviders(<HostCard host={{ ...host, inventory }} now={Date.now()} can={operator} />);
    const card = screen.getByRole('article', { name: 'bench-a' });
    expect(within(card).getByRole('list', { name: 'Caches' })).toHaveTextContent('L1d 48 KiBL1i 32 KiBL2 2 MiBL3 105 MiB');
    expect(card).toHaveTextContent('Virtualisationkvm · c7i.large');
    expect(card).toHaveTextContent('Governorperformance');
    expect(card).toHaveTextContent('Turbo / boostyes');
    expect(card).toHaveTextContent('Disksnvme0n1 · Amazon EBS · 100 GiB');
    expect(card).toHaveTextContent('NICsnot reported yet');
    expect(card).toHaveTextContent("Disk targetswork (the run's own directory)");
    expect(within(card).getByRole('link', { name: 'Runs on bench-a' })).toHaveAttribute('href', '/history?host=1');
  });

  it('names the disk targets its runner offers a disk job', () => {
    const inventory = { ...host.inventory, disks: { devices: [], targets: [{ name: 'nvme0', fstype: 'xfs', device: 'nvme0n1', free_bytes: 2 ** 40 }] } };
    renderWithProviders(<HostCard host={{ ...host, inventory }} now={Date.now()} can={operator} />);
    expect(screen.getByRole('article', { name: 'bench-a' })).toHaveTextContent("Disk targetswork (the run's own directory); nvme0 · xfs · nvme0n1 · 1024 GiB free");
  });
});

describe('HostCard by role', () => {
  const viewer = { operate: false, administer: false };
  const admin = { operate: true, administer: true };

  it('a viewer sees the facts but no New job, label, peak or admin control', () => {
    renderWithProviders(<HostCard host={host} now={Date.now()} can={viewer} />);
    const card = screen.getByRole('article', { name: 'bench-a' });
    expect(within(card).queryByRole('link', { name: 'New job on bench-a' })).not.toBeInTheDocument();
    expect(within(card).queryByRole('button', { name: 'Edit labels of bench-a' })).not.toBeInTheDocument();
    expect(within(card).queryByRole('button', { name: /^Enter .* peak/ })).not.toBeInTheDocument();
    expect(within(card).queryByLabelText('Enter another peak')).not.toBeInTheDocument();
    expect(within(card).queryByRole('group', { name: 'Admin actions for bench-a' })).not.toBeInTheDocument();
    expect(within(card).getByRole('link', { name: 'Runs on bench-a' })).toBeInTheDocument();
    expect(card).toHaveTextContent('c7i.large');
  });

  it('an operator edits labels and peaks and starts jobs, but has no admin control', () => {
    renderWithProviders(<HostCard host={host} now={Date.now()} can={operator} />);
    const card = screen.getByRole('article', { name: 'bench-a' });
    expect(within(card).getByRole('button', { name: 'Edit labels of bench-a' })).toBeInTheDocument();
    expect(within(card).getByRole('button', { name: 'Enter FP64 peak of bench-a' })).toBeInTheDocument();
    expect(within(card).queryByRole('group', { name: 'Admin actions for bench-a' })).not.toBeInTheDocument();
  });

  it('an admin gets Revoke, Rotate credential and Delete', () => {
    renderWithProviders(<HostCard host={host} now={Date.now()} can={admin} />);
    const group = screen.getByRole('group', { name: 'Admin actions for bench-a' });
    expect(within(group).getAllByRole('button').map((b) => b.textContent)).toEqual(['Rotate credential', 'Revoke', 'Delete']);
  });

  it('shows the address, the runner version, a warning when it differs from the server, and a pending rotation', () => {
    renderWithProviders(
      <HostCard host={{ ...host, runner_version: '0.0.9', server_version: '0.1.0', version_mismatch: true, credential_rotation_pending: true }} now={Date.now()} can={viewer} />,
    );
    const card = screen.getByRole('article', { name: 'bench-a' });
    expect(card).toHaveTextContent('Address10.0.0.5');
    expect(card).toHaveTextContent('Runner0.0.9 differs from server 0.1.0');
    expect(card).toHaveTextContent('credential rotation pending');
  });

  it('a revoked host is greyed, says so, and offers an admin only Delete', () => {
    renderWithProviders(<HostCard host={{ ...host, revoked: true, revoked_at: '2026-11-01T12:00:00Z', online: false }} now={Date.now()} can={admin} />);
    const card = screen.getByRole('article', { name: 'bench-a' });
    expect(card).toHaveClass('host-card-revoked');
    expect(within(card).getByText('revoked')).toBeInTheDocument();
    expect(within(card).queryByRole('link', { name: 'New job on bench-a' })).not.toBeInTheDocument();
    expect(within(card).queryByRole('button', { name: 'Edit labels of bench-a' })).not.toBeInTheDocument();
    expect(within(card).getAllByRole('button', { name: /bench-a/ }).map((b) => b.textContent)).toEqual(['Delete']);
  });

  it('a peak a person entered says who, from its formula', () => {
    const entered = { ...host, peaks: { ...host.peaks, memory_bw: { value: 102400, unit: 'MB/s', formula: 'entered by ada: datasheet', source: 'user' as const } } };
    renderWithProviders(<HostCard host={entered} now={Date.now()} can={viewer} />);
    expect(screen.getByRole('region', { name: 'Theoretical peaks' })).toHaveTextContent('Memory bandwidth 102,400 MB/s = entered by ada: datasheet (user)');
  });
});
