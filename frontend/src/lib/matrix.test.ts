import { describe, expect, it } from 'vitest';
import { resultRow } from '../test/fixtures';
import { cellKey, cellLabel, findCell, groupMatrix, hasBlocks } from './matrix';

const KiB = 1024;
const MiB = 1024 ** 2;

describe('groupMatrix', () => {
  it('groups rows by operation in the backend order, with sorted block sizes and thread counts', () => {
    const rows = [
      resultRow({ op: 'seq_read', unit: 'MB/s', block_bytes: 8 * MiB, threads: 2 }),
      resultRow({ op: 'seq_read', unit: 'MB/s', block_bytes: 8, threads: 1 }),
      resultRow({ op: 'seq_read', unit: 'MB/s', block_bytes: 8 * KiB, threads: 2 }),
      resultRow({ op: 'seq_read', unit: 'MB/s', block_bytes: 8, threads: 2 }),
      resultRow({ op: 'latency', unit: 'ns', block_bytes: 80 * MiB, threads: 1 }),
    ];
    const [read, lat] = groupMatrix(rows);
    expect(read).toMatchObject({ op: 'seq_read', unit: 'MB/s', blocks: [8, 8 * KiB, 8 * MiB], threads: [1, 2] });
    expect(read?.rows).toHaveLength(4);
    expect(lat).toMatchObject({ op: 'latency', unit: 'ns', blocks: [80 * MiB], threads: [1] });
    expect(findCell(read!, 8 * KiB, 2)).toBe(rows[2]);
    expect(findCell(read!, 8 * KiB, 1)).toBeUndefined();
    expect(hasBlocks(read!)).toBe(true);
  });

  it('keeps CPU rows (no block size) as one column', () => {
    const [cpu] = groupMatrix([resultRow({ threads: 4 }), resultRow({ threads: 1 })]);
    expect(cpu).toMatchObject({ op: 'fp64', blocks: [null], threads: [1, 4] });
    expect(hasBlocks(cpu!)).toBe(false);
    expect(findCell(cpu!, null, 4)?.threads).toBe(4);
  });
});

describe('cell labels', () => {
  it('names a cell by op, block size and threads, and keys it uniquely', () => {
    expect(cellLabel({ op: 'fp64', threads: 1 })).toBe('FP64 FLOPS · 1 thread');
    expect(cellLabel({ op: 'seq_read', block_bytes: 8 * KiB, threads: 4 })).toBe('Sequential read · 8 KiB · 4 threads');
    expect(cellLabel({ op: 'seq_read', block_bytes: 8, threads: 4 }, { op: false })).toBe('8 B · 4 threads');
    expect(cellKey({ op: 'fp64', threads: 2 })).not.toBe(cellKey({ op: 'fp64', block_bytes: 2, threads: 2 }));
  });
});
