import { describe, expect, it } from 'vitest';
import { cpuExperiment, cpuTraceExperiment } from '../test/fixtures';
import { fieldsFromSchema, initialValues, parseField, validateParams, type FieldSpec } from './param-schema';

const fields = fieldsFromSchema(cpuExperiment.parameters);
const field = (name: string) => fields.find((f) => f.name === name) as FieldSpec;

describe('fieldsFromSchema', () => {
  it('maps enum to select, integer list to list, number|integer union to number, with bounds', () => {
    expect(fields.map((f) => [f.name, f.kind])).toEqual([
      ['op', 'enum'],
      ['threads', 'integer-list'],
      ['repeats', 'integer'],
      ['duration_s', 'number'],
      ['warmup_s', 'number'],
    ]);
    expect(field('threads')).toMatchObject({ min: 1, max: 256, minItems: 1, maxItems: 64 });
    expect(field('duration_s')).toMatchObject({ min: 0.2, max: 3600 });
    expect(field('op').options.map((o) => o.label)).toEqual(['FP64 FLOPS', 'FP32 FLOPS', 'Integer ops (INT32)']);
  });

  it('ignores pydantic auto titles and labels unit suffixes readably', () => {
    expect(field('duration_s').label).toBe('Duration (s)');
    expect(field('warmup_s').label).toBe('Warm-up (s)');
    expect(field('repeats').label).toBe('Repeats');
  });

  it('pre-fills defaults as text', () => {
    expect(initialValues(fields)).toEqual({ op: 'fp64', threads: '1, 2, 4, 8', repeats: '3', duration_s: '5', warmup_s: '1' });
    expect(initialValues(fieldsFromSchema(cpuTraceExperiment.parameters))).toEqual({ op: 'fp64', threads: '1', duration_s: '600' });
  });

  it('resolves $ref and nullable unions', () => {
    const f = fieldsFromSchema({
      type: 'object',
      $defs: { Op: { enum: ['a', 'b'], type: 'string' } },
      properties: { op: { $ref: '#/$defs/Op', default: 'b' }, n: { anyOf: [{ type: 'integer', minimum: 2 }, { type: 'null' }] } },
    });
    expect(f[0]).toMatchObject({ kind: 'enum', default: 'b' });
    expect(f[1]).toMatchObject({ kind: 'integer', min: 2, required: false });
  });
});

describe('parseField / validateParams', () => {
  it('parses valid values into typed params', () => {
    const { params, errors } = validateParams(fields, { op: 'int32', threads: '1, 2 4,8', repeats: '1', duration_s: '0.5', warmup_s: '0' });
    expect(errors).toEqual({});
    expect(params).toEqual({ op: 'int32', threads: [1, 2, 4, 8], repeats: 1, duration_s: 0.5, warmup_s: 0 });
  });

  it('explains out-of-range values with the schema bounds', () => {
    expect(parseField(field('repeats'), '0')).toEqual({ ok: false, error: '0 is out of range: allowed 1 – 100' });
    expect(parseField(field('threads'), '1, 999')).toEqual({ ok: false, error: '999 is out of range: allowed 1 – 256' });
    expect(parseField(field('duration_s'), '0.1')).toMatchObject({ ok: false });
  });

  it('refuses non-numbers, fractions for integers, duplicates and empty required fields', () => {
    expect(parseField(field('repeats'), '2.5')).toEqual({ ok: false, error: '2.5 is not a whole number' });
    expect(parseField(field('threads'), '4; rm -rf /')).toMatchObject({ ok: false });
    expect(parseField(field('threads'), '2,2')).toEqual({ ok: false, error: '2 is listed twice' });
    expect(parseField(field('repeats'), '  ')).toEqual({ ok: false, error: 'Required' });
    expect(parseField(field('threads'), ',')).toEqual({ ok: false, error: 'Give at least 1 value' });
  });
});

// As the backend publishes DiskParams / MemoryParams (pydantic JSON Schema).
const diskSchema = {
  type: 'object',
  properties: {
    ops: {
      default: ['seq_read', 'rand_read'], description: 'Operations', minItems: 1, maxItems: 5, title: 'Ops', type: 'array',
      items: { enum: ['rw', 'seq_read', 'seq_write', 'rand_read', 'rand_write'], type: 'string' },
    },
    blocks: {
      default: [8, 8192, 8388608, 83886080], description: 'Block sizes, bytes', minItems: 1, maxItems: 64, title: 'Blocks', type: 'array',
      items: { maximum: 1073741824, minimum: 8, multipleOf: 8, type: 'integer' },
    },
    file_size: { default: 1073741824, description: 'Test file size, bytes', maximum: 68719476736, minimum: 1048576, title: 'File Size', type: 'integer' },
    iodepth: { default: 1, maximum: 256, minimum: 1, type: 'integer', description: 'Outstanding I/Os per thread' },
  },
};

describe('lists of operations and sizes in bytes', () => {
  const disk = fieldsFromSchema(diskSchema);
  const f = (name: string) => disk.find((x) => x.name === name) as FieldSpec;

  it('maps an array of enums to a pick-list with labels, and byte fields by their description', () => {
    expect(disk.map((x) => [x.name, x.kind, x.bytes])).toEqual([
      ['ops', 'enum-list', false],
      ['blocks', 'integer-list', true],
      ['file_size', 'integer', true],
      ['iodepth', 'integer', false],
    ]);
    expect(f('ops').options.map((o) => o.label)).toEqual(['Mixed read/write 50/50', 'Sequential read', 'Sequential write', 'Random read', 'Random write']);
    expect(f('blocks')).toMatchObject({ min: 8, max: 1073741824, multipleOf: 8 });
  });

  it('pre-fills sizes in exact binary units and operations as a list', () => {
    expect(initialValues(disk)).toEqual({ ops: 'seq_read, rand_read', blocks: '8 B, 8 KiB, 8 MiB, 80 MiB', file_size: '1 GiB', iodepth: '1' });
  });

  it('parses sizes written with units, KiB and KB never confused', () => {
    expect(parseField(f('blocks'), '8 B, 8 KiB, 8MiB, 80 MiB')).toEqual({ ok: true, value: [8, 8192, 8388608, 83886080] });
    expect(parseField(f('blocks'), '8 KB')).toEqual({ ok: true, value: [8000] });
    expect(parseField(f('blocks'), '8192')).toEqual({ ok: true, value: [8192] });
    expect(parseField(f('blocks'), '8 K')).toMatchObject({ ok: false, error: expect.stringContaining('KiB') });
    expect(parseField(f('blocks'), '12')).toEqual({ ok: false, error: '12 B is not a multiple of 8 B' });
    expect(parseField(f('blocks'), '2 GiB')).toEqual({ ok: false, error: '2 GiB is out of range: allowed 8 B – 1 GiB' });
    expect(parseField(f('file_size'), '4 GiB')).toEqual({ ok: true, value: 4294967296 });
  });

  it('parses a pick-list in the schema order and enforces its item count', () => {
    expect(parseField(f('ops'), 'rand_read, seq_read')).toEqual({ ok: true, value: ['seq_read', 'rand_read'] });
    expect(parseField(f('ops'), 'nope')).toMatchObject({ ok: false });
    expect(parseField(f('ops'), '')).toEqual({ ok: false, error: 'Required' });
  });
});
