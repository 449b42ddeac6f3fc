import { describe, expect, it } from 'vitest';
import { bytesInput, extraKeys, extraMeta, extraMetaIn, formatBlockSize, formatExtra, lowerIsBetter, parseByteSize, withUnit, type ExtraRow, type ExtraUnits } from './units';

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

/** A row's extra figures as the backend attaches them from the kernel's declaration (`--describe` "results"). */
const declared = (units: Record<string, string>, latencies: string[] = []): ExtraUnits => ({ extra_units: units, extra_lower_is_better: latencies });

describe('extra figures', () => {
  it('takes the unit and latency-ness from the row, and names the figure from its key', () => {
    const row = declared({ lat_p99_us: 'µs', lat_avg_ms: 'ms', latency_ns: 'ns', loss_percent: '%', clock_after_ghz: 'GHz', iops: 'IOPS', cpu_share: '', sender_bytes: 'B' }, ['lat_p99_us', 'lat_avg_ms', 'latency_ns']);
    expect(extraMeta('lat_p99_us', row)).toMatchObject({ label: 'p99 latency', unit: 'µs', latency: true, primary: true });
    expect(extraMeta('lat_avg_ms', row)).toMatchObject({ label: 'Avg latency', unit: 'ms', latency: true });
    expect(extraMeta('latency_ns', row)).toMatchObject({ label: 'Latency', unit: 'ns', latency: true });
    expect(extraMeta('loss_percent', row)).toMatchObject({ label: 'Loss', unit: '%', latency: false, primary: true });
    expect(extraMeta('clock_after_ghz', row)).toMatchObject({ label: 'Clock after', unit: 'GHz', latency: false, primary: false });
    expect(extraMeta('iops', row)).toMatchObject({ label: 'IOPS', unit: 'IOPS', primary: true });
    expect(extraMeta('cpu_share', row)).toMatchObject({ label: 'CPU share', unit: '', primary: false });
    expect(extraMeta('sender_bytes', row)).toMatchObject({ label: 'Sender bytes', unit: 'B', latency: false });
    // a share the kernel declares lower is better is no latency: not on the latency chart, not in the cell (issue 32)
    const shares = declared({ wait_share: '', peer_wait_share: '' }, ['wait_share', 'peer_wait_share']);
    expect(extraMeta('wait_share', shares)).toMatchObject({ latency: false, primary: false });
  });

  it('labels the kernels\' other spellings: unit prefixes, flattened nested figures, counts', () => {
    const row = declared(
      { ns_per_load: 'ns', ns_per_op: 'ns', latency_p99_us: 'µs', lat_samples: '', bytes_read: 'B', sm_clock_mhz: 'MHz', plan_launch_ms: 'ms', loss_pct: '%' },
      ['ns_per_load', 'latency_p99_us'],
    );
    expect(extraMeta('ns_per_load', row)).toMatchObject({ label: 'Time per load', unit: 'ns', latency: true, primary: true });
    expect(extraMeta('ns_per_op', row)).toMatchObject({ label: 'Time per op', unit: 'ns', latency: false, primary: false });
    expect(extraMeta('latency_p99_us', row)).toMatchObject({ label: 'p99 latency', unit: 'µs', latency: true });
    expect(extraMeta('lat_samples', row)).toMatchObject({ label: 'Latency samples', unit: '', latency: false, primary: false });
    expect(extraMeta('bytes_read', row)).toMatchObject({ label: 'Bytes read', unit: 'B' });
    expect(extraMeta('sm_clock_mhz', row)).toMatchObject({ label: 'SM clock', unit: 'MHz' });
    expect(extraMeta('plan_launch_ms', row)).toMatchObject({ label: 'Plan launch', unit: 'ms', latency: false });
    expect(extraMeta('loss_pct', row)).toMatchObject({ label: 'Loss', unit: '%', primary: true });
  });

  it('guesses nothing from a key the row does not declare', () => {
    expect(extraMeta('lat_p99_us')).toMatchObject({ label: 'Latency p99 us', unit: '', latency: false, primary: false });
    expect(extraMeta('sender_mbit_s', declared({}))).toMatchObject({ unit: '', latency: false });
    expect(formatExtra('lat_p99_us', 12.345)).toBe('12.35');
  });

  it('a unit whose spelling the key does not end in is still the unit', () => {
    const row = declared({ pcie_width: 'lanes', rtt_avg: 'µs' }, ['rtt_avg']);
    expect(extraMeta('pcie_width', row)).toMatchObject({ label: 'PCIe width', unit: 'lanes' });
    expect(formatExtra('pcie_width', 16, row)).toBe('16 lanes');
    expect(extraMeta('rtt_avg', row)).toMatchObject({ label: 'Rtt avg', unit: 'µs', latency: true, primary: true });
  });

  it('formats each with its unit', () => {
    const row = declared({ lat_p50_us: 'µs', loss_percent: '%', iops: 'IOPS', receiver_bytes: 'B', preemptions: '' }, ['lat_p50_us']);
    expect(formatExtra('lat_p50_us', 12.345, row)).toBe('12.35 µs');
    expect(formatExtra('loss_percent', 0.25, row)).toBe('0.25 %');
    expect(formatExtra('iops', 12345.6, row)).toBe('12,350 IOPS');
    expect(formatExtra('receiver_bytes', 8 * 1024 ** 2, row)).toBe('8 MiB');
    expect(formatExtra('preemptions', 4080, row)).toBe('4,080');
    expect(formatExtra('lat_p50_us', null, row)).toBe('—');
  });

  it('lists the keys of all rows, headline figures first', () => {
    const rows: ExtraRow[] = [
      { extra: { cpu_share: 1, lat_p99_us: 2 }, ...declared({ cpu_share: '', lat_p99_us: 'µs' }, ['lat_p99_us']) },
      { extra: { iops: 3 }, ...declared({ iops: 'IOPS' }) },
      { extra: null },
    ];
    expect(extraKeys(rows)).toEqual(['iops', 'lat_p99_us', 'cpu_share']);
    expect(extraMetaIn(rows, 'lat_p99_us')).toMatchObject({ unit: 'µs', latency: true });
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
    const row = declared({ sender_mbit_s: 'Mbit/s', prefill_mb_s: 'MB/s' });
    expect(extraMeta('sender_mbit_s', row)).toMatchObject({ unit: 'Mbit/s', label: 'Sender throughput', latency: false });
    // issue 32: the two sender figures no longer share one label
    expect(extraMeta('sender_bytes', declared({ sender_bytes: 'B' })).label).toBe('Sender bytes');
    expect(formatExtra('sender_mbit_s', 23018.4, row)).toBe('23,020 Mbit/s');
    expect(extraMeta('prefill_mb_s', row).unit).toBe('MB/s');
  });

  it('counts are whole numbers, a mean over repeats says so', () => {
    const row = declared({ preemptions: '', retransmits: '' });
    expect(formatExtra('preemptions', 144, row)).toBe('144');
    expect(formatExtra('preemptions', 144.3, row)).toBe('≈ 144 (mean over repeats)');
    expect(formatExtra('retransmits', 12000, row)).toBe('12,000');
  });

  it('a short time changes unit instead of using exponent notation', () => {
    const row = declared({ prefill_s: 's', serve_s: 's', lat_p99_us: 'µs' }, ['lat_p99_us']);
    expect(formatExtra('prefill_s', 4.65e-4, row)).toBe('465 µs');
    expect(formatExtra('serve_s', 0.0123, row)).toBe('12.3 ms');
    expect(formatExtra('serve_s', 3.5, row)).toBe('3.5 s');
    expect(formatExtra('lat_p99_us', 12.5, row)).toBe('12.5 µs'); // latencies keep their column's unit
  });
});
