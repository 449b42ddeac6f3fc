import { describe, expect, it } from 'vitest';
import { bytesInput, extraKeys, extraMeta, formatBlockSize, formatExtra, lowerIsBetter, parseByteSize, withUnit } from './units';

describe('byte sizes in forms', () => {
  it('parses KiB as 1024 and KB as 1000, and refuses an ambiguous K', () => {
    expect(parseByteSize('8 KiB')).toEqual({ value: 8192 });
    expect(parseByteSize('8KB')).toEqual({ value: 8000 });
    expect(parseByteSize('8 kB')).toEqual({ value: 8000 });
    expect(parseByteSize('1.5 MiB')).toEqual({ value: 1572864 });
    expect(parseByteSize('80 MiB')).toEqual({ value: 83886080 });
    expect(parseByteSize('64')).toEqual({ value: 64 });
    expect(parseByteSize('8 K')).toMatchObject({ error: expect.stringContaining('1024-based') });
    expect(parseByteSize('0.5 B')).toMatchObject({ error: expect.stringContaining('whole number') });
    expect(parseByteSize('lots')).toMatchObject({ error: expect.any(String) });
  });

  it('writes sizes back exactly, without digit grouping', () => {
    expect(bytesInput(83886080)).toBe('80 MiB');
    expect(bytesInput(1_000_000)).toBe('1000000 B');
  });
});

describe('formatBlockSize', () => {
  it('shows the API bytes in exact binary units (KiB, not KB)', () => {
    expect(formatBlockSize(8)).toBe('8 B');
    expect(formatBlockSize(8 * 1024)).toBe('8 KiB');
    expect(formatBlockSize(8 * 1024 ** 2)).toBe('8 MiB');
    expect(formatBlockSize(80 * 1024 ** 2)).toBe('80 MiB');
    expect(formatBlockSize(1024 ** 3)).toBe('1 GiB');
    expect(formatBlockSize(1536)).toBe('1,536 B');
    expect(formatBlockSize(1)).toBe('1 B');
  });

  it('never rounds a decimal size into a binary unit', () => {
    expect(formatBlockSize(8000)).toBe('8,000 B');
    expect(formatBlockSize(8_000_000)).toBe('8,000,000 B');
    expect(formatBlockSize(3 * 1024 * 1000)).toBe('3,000 KiB');
  });

  it('shows a missing size as —', () => {
    expect(formatBlockSize(null)).toBe('—');
    expect(formatBlockSize(undefined)).toBe('—');
  });
});

describe('extra figures', () => {
  it('reads the unit from the key suffix and names the figure', () => {
    expect(extraMeta('lat_p99_us')).toMatchObject({ label: 'p99 latency', unit: 'µs', latency: true, primary: true });
    expect(extraMeta('lat_avg_ms')).toMatchObject({ label: 'Avg latency', unit: 'ms', latency: true });
    expect(extraMeta('latency_ns')).toMatchObject({ label: 'Latency', unit: 'ns', latency: true });
    expect(extraMeta('loss_percent')).toMatchObject({ label: 'Loss', unit: '%', latency: false, primary: true });
    expect(extraMeta('clock_after_ghz')).toMatchObject({ label: 'Clock after', unit: 'GHz', latency: false, primary: false });
    expect(extraMeta('iops')).toMatchObject({ label: 'IOPS', unit: '', primary: true });
    expect(extraMeta('cpu_share')).toMatchObject({ label: 'CPU share', unit: '', primary: false });
    expect(extraMeta('sender_bytes')).toMatchObject({ unit: 'B', latency: false });
  });

  it('reads the kernels\' other spellings: unit prefixes, flattened nested figures, counts', () => {
    expect(extraMeta('ns_per_load')).toMatchObject({ label: 'Time per load', unit: 'ns', latency: true, primary: true });
    expect(extraMeta('ns_per_op')).toMatchObject({ label: 'Time per op', unit: 'ns', latency: false, primary: false });
    expect(extraMeta('latency_p99_us')).toMatchObject({ label: 'p99 latency', unit: 'µs', latency: true });
    expect(extraMeta('lat_samples')).toMatchObject({ label: 'Latency samples', unit: '', latency: false, primary: false });
    expect(extraMeta('bytes_read')).toMatchObject({ label: 'Bytes read', unit: 'B' });
    expect(extraMeta('sm_clock_mhz')).toMatchObject({ label: 'SM clock', unit: 'MHz' });
    expect(extraMeta('launch_ms')).toMatchObject({ unit: 'ms', latency: false });
    expect(extraMeta('loss_pct')).toMatchObject({ label: 'Loss', unit: '%', primary: true });
  });

  it('formats each with its unit', () => {
    expect(formatExtra('lat_p50_us', 12.345)).toBe('12.35 µs');
    expect(formatExtra('loss_percent', 0.25)).toBe('0.25 %');
    expect(formatExtra('iops', 12345.6)).toBe('12,350 IOPS');
    expect(formatExtra('receiver_bytes', 8 * 1024 ** 2)).toBe('8 MiB');
    expect(formatExtra('preemptions', 4080)).toBe('4,080');
    expect(formatExtra('lat_p50_us', null)).toBe('—');
  });

  it('lists the keys of all rows, headline figures first', () => {
    expect(extraKeys([{ extra: { cpu_share: 1, lat_p99_us: 2 } }, { extra: { iops: 3 } }, { extra: null }])).toEqual(['iops', 'lat_p99_us', 'cpu_share']);
  });
});

describe('unit helpers', () => {
  it('knows latencies are better lower', () => {
    expect(lowerIsBetter('ns')).toBe(true);
    expect(lowerIsBetter('µs')).toBe(true);
    expect(lowerIsBetter('GFLOP/s')).toBe(false);
    expect(lowerIsBetter('MB/s')).toBe(false);
  });

  it('joins a figure and its unit', () => {
    expect(withUnit(52.345, 'GFLOP/s')).toBe('52.35 GFLOP/s');
    expect(withUnit(null, 'GFLOP/s')).toBe('—');
  });
});

describe('issue 13: units that do not mislead', () => {
  it('a sender rate in Mbit/s is not a time', () => {
    expect(extraMeta('sender_mbit_s')).toMatchObject({ unit: 'Mbit/s', label: 'Sender' });
    expect(formatExtra('sender_mbit_s', 23018.4)).toBe('23,020 Mbit/s');
    expect(extraMeta('prefill_mb_s').unit).toBe('MB/s');
  });

  it('counts are whole numbers, a mean over repeats says so', () => {
    expect(formatExtra('preemptions', 144)).toBe('144');
    expect(formatExtra('preemptions', 144.3)).toBe('≈ 144 (mean over repeats)');
    expect(formatExtra('retransmits', 12000)).toBe('12,000');
  });

  it('a short time changes unit instead of using exponent notation', () => {
    expect(formatExtra('prefill_s', 4.65e-4)).toBe('465 µs');
    expect(formatExtra('serve_s', 0.0123)).toBe('12.3 ms');
    expect(formatExtra('serve_s', 3.5)).toBe('3.5 s');
    expect(formatExtra('lat_p99_us', 12.5)).toBe('12.5 µs'); // latencies keep their column's unit
  });
});
