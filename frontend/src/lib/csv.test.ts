import { describe, expect, it } from 'vitest';
import { csvField, toCsv } from './csv';

describe('CSV', () => {
  it('writes numbers in full, empty for missing, and quotes only when needed', () => {
    expect(toCsv([['op', 'mean', 'ci95_low'], ['fp64', 52.34567891, null], ['a,b', 'say "hi"', 'two\nlines']])).toBe(
      'op,mean,ci95_low\nfp64,52.34567891,\n"a,b","say ""hi""","two\nlines"\n',
    );
    expect(csvField(true)).toBe('true');
    expect(csvField(Number.NaN)).toBe('');
  });

  it('keeps spreadsheet formulas inert but negative numbers as numbers', () => {
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvField('@cmd')).toBe("'@cmd");
    expect(csvField('-1.5')).toBe('-1.5');
    expect(csvField(-1.5)).toBe('-1.5');
    expect(csvField('+1e-9')).toBe('+1e-9');
    // a leading number does not make the rest of the cell harmless
    expect(csvField("-2+3+cmd|' /C calc'!A0")).toBe("'-2+3+cmd|' /C calc'!A0");
    expect(csvField('\t=1')).toBe("'\t=1");
    expect(csvField('\r=1')).toBe(`"'\r=1"`);
  });
});
