// Peaks a person may enter (PUT /api/hosts/{id}/peaks/{key}), each in the unit the backend stores it
// in. Typed against the generated API: a new key in the contract fails the type check until it is
// listed here.
import type { PeakKey } from '../../../lib/api/types';

export const PEAK_KEYS: Record<PeakKey, { unit: string }> = {
  cpu_fp64: { unit: 'GFLOP/s' },
  cpu_fp32: { unit: 'GFLOP/s' },
  cpu_int32: { unit: 'GIOP/s' },
  memory_bw: { unit: 'MB/s' },
  disk_bw: { unit: 'MB/s' },
  nic_bw: { unit: 'Mbit/s' },
  gpu_fp32: { unit: 'GFLOP/s' },
  gpu_fp64: { unit: 'GFLOP/s' },
  gpu_bw: { unit: 'GB/s' },
};

export function isPeakKey(key: string): key is PeakKey {
  return Object.hasOwn(PEAK_KEYS, key);
}
