import { describe, expect, it } from 'vitest';
import { cpuExperiment, cpuTraceExperiment } from '../test/fixtures';
import { describeBounds, fieldsFromSchema, initialValues, parseField, validateParams, type FieldSpec } from './param-schema';

const fields = fieldsFromSchema(cpuExperiment.parameters);
const field = (name: string) => fields.find((f) => f.name === name) as FieldSpec;

describe('fieldsFromSchema', () => {
  it('maps a fan-out enum to checkboxes, integer list to list, number|integer union to number, with bounds', () => {
    expect(fields.map((f) => [f.name, f.kind])).toEqual([
      ['op', 'enum-list'],
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
      default: [8, 8192, 8388608, 83886080], description: 'Block sizes', minItems: 1, maxItems: 64, title: 'Blocks', type: 'array',
      items: { maximum: 1073741824, minimum: 8, multipleOf: 8, type: 'integer' }, 'x-unit': 'B',
    },
    file_size: { default: 1073741824, description: 'Test file size', maximum: 68719476736, minimum: 1048576, title: 'File Size', type: 'integer', 'x-unit': 'B' },
    iodepth: { default: 1, maximum: 256, minimum: 1, type: 'integer', description: 'Outstanding I/Os per thread' },
  },
};

describe('lists of operations and sizes in bytes', () => {
  const disk = fieldsFromSchema(diskSchema);
  const f = (name: string) => disk.find((x) => x.name === name) as FieldSpec;

  it('maps an array of enums to a pick-list with labels, and byte fields by their declared unit', () => {
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

// As the backend publishes CpuParams / MemoryParams / GpuParams: a fan-out op (one value or a list), a runner
// parameter whose help mentions bytes but which is a count (HPL's N), a GPU buffer declared in bytes.
const published = {
  type: 'object',
  properties: {
    op: {
      anyOf: [
        { enum: ['fp64', 'fp32', 'int32'], type: 'string' },
        { items: { enum: ['fp64', 'fp32', 'int32'], type: 'string' }, maxItems: 3, minItems: 1, type: 'array', uniqueItems: true },
      ],
      default: 'fp64',
      description: 'fp64 / fp32: fused multiply-add chains. A list of them runs each: one run per item.',
      title: 'Op',
    },
    isa: { default: 'auto', enum: ['auto', 'avx2'], type: 'string', title: 'Isa', description: 'Instruction set.' },
    hpl_n: {
      default: 0, maximum: 20000, minimum: 0, type: 'integer', title: 'Hpl N',
      description: 'With reference on (fp64): the problem size N of hpcc\'s HPL (the matrix is 8 N^2 bytes).',
    },
    bytes: { default: 0, maximum: 1000000000000, minimum: 0, type: 'integer', title: 'Bytes', description: 'Buffer size, bytes', 'x-unit': 'B' },
    sizes: {
      default: [1, 1024], items: { minimum: 1, maximum: 4194304, type: 'integer' }, minItems: 1, maxItems: 64, type: 'array',
      description: 'Message sizes in bytes', 'x-unit': 'B',
    },
  },
};

describe('the published schema in the user\'s words', () => {
  const cpu = fieldsFromSchema(published, 'cpu');
  const f = (name: string) => cpu.find((x) => x.name === name) as FieldSpec;

  it('a size in bytes is one because the kernel declares its unit, never because its help says "bytes"', () => {
    expect(f('hpl_n')).toMatchObject({ kind: 'integer', bytes: false });
    expect(describeBounds(f('hpl_n'))).toBe('0 – 20000');
    expect(f('bytes')).toMatchObject({ kind: 'integer', bytes: true });
    expect(describeBounds(f('bytes'))).toBe('0 B – 1 TB');
    expect(parseField(f('bytes'), '2 TB')).toEqual({ ok: false, error: '2 TB is out of range: allowed 0 B – 1 TB' });
    expect(describeBounds(f('sizes'))).toBe('1 B – 4 MiB');
  });

  it('offers a fan-out op as checkboxes, and sends one ticked as one value, several as a list', () => {
    expect(f('op')).toMatchObject({ kind: 'enum-list', oneOrMany: true, minItems: 1, default: 'fp64', label: 'Operations' });
    expect(f('op').options.map((o) => o.label)).toEqual(['FP64 FLOPS', 'FP32 FLOPS', 'Integer ops (INT32)']);
    expect(initialValues(cpu).op).toBe('fp64');
    expect(parseField(f('op'), 'fp32')).toEqual({ ok: true, value: 'fp32' });
    expect(parseField(f('op'), 'int32, fp64')).toEqual({ ok: true, value: ['fp64', 'int32'] });
    expect(parseField(f('op'), '')).toEqual({ ok: false, error: 'Required' });
  });

  it('labels and explains parameters in words, per experiment where a name means different things', () => {
    expect(f('isa').label).toBe('Instruction set');
    expect(f('hpl_n').label).toBe('HPL matrix size N (0 = sized for you)');
    expect(f('op').description).toMatch(/^What to measure: /);
    expect(fieldsFromSchema(published, 'network').find((x) => x.name === 'sizes')?.label).toBe('Message sizes');
    expect(fieldsFromSchema(published, 'memory').find((x) => x.name === 'sizes')?.label).toBe('Working-set sizes');
    expect(f('hpl_n').description).toMatch(/^With the reference tools on/);
    // where the vocabulary has no help for it, the kernel's own description
    expect(f('bytes').description).toBe('Buffer size, bytes');
    expect(fieldsFromSchema(published, 'gpu').find((x) => x.name === 'bytes')?.description).toMatch(/^The buffer for memory bandwidth/);
  });
});
