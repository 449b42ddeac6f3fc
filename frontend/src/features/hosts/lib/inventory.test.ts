import { describe, expect, it } from 'vitest';
import { readDevices, readDiskTargets } from './inventory';

describe('readDevices', () => {
  it('reads the runner nested shape (disks.devices, nics.interfaces)', () => {
    const inv = {
      disks: { devices: [{ name: 'vda', model: null, size_bytes: 274877906944, rotational: true, driver: 'virtio_blk' }], work_dir: null },
      nics: { interfaces: [{ name: 'eth0', speed_mbps: 10000, driver: 'virtio_net', operstate: 'up' }, { name: 'ifb0', operstate: 'down' }] },
    };
    expect(readDevices(inv, 'disks')).toEqual(['vda · virtio_blk · rotational · 256 GiB']);
    expect(readDevices(inv, 'nics')).toEqual(['eth0 · virtio_net · 10000 Mbit/s', 'ifb0 · down']);
  });

  it('still reads a flat list, and nothing from nothing', () => {
    expect(readDevices({ disks: [{ name: 'sda', size_bytes: 2 ** 30 }] }, 'disks')).toEqual(['sda · 1 GiB']);
    expect(readDevices({}, 'nics')).toEqual([]);
  });
});

describe('readDiskTargets', () => {
  it('lists each target by name with its filesystem, device and free space', () => {
    const inv = { disks: { devices: [], targets: [{ name: 'nvme0', fstype: 'xfs', device: 'nvme0n1', free_bytes: 500 * 2 ** 30 }, { name: 'tmp', fstype: null, device: null, free_bytes: null }] } };
    expect(readDiskTargets(inv)).toEqual(['nvme0 · xfs · nvme0n1 · 500 GiB free', 'tmp']);
  });

  it('reads nothing from an inventory without targets or with malformed ones', () => {
    expect(readDiskTargets({ disks: { devices: [] } })).toEqual([]);
    expect(readDiskTargets({ disks: { targets: [{ fstype: 'xfs' }, 'x'] } })).toEqual([]);
    expect(readDiskTargets(null)).toEqual([]);
  });
});
