import { describe, expect, it } from 'vitest';
import { cpuExperiment, cpuTraceExperiment } from '../../../test/fixtures';
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
