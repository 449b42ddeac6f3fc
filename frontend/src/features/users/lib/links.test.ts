import { describe, expect, it } from 'vitest';
import { absoluteLink } from './links';

describe('absoluteLink', () => {
  it('puts the dashboard origin before the path, fragment kept', () => {
    expect(absoluteLink('/signin/link#hblink_abc', 'http://10.0.0.1:8000')).toBe('http://10.0.0.1:8000/signin/link#hblink_abc');
    expect(absoluteLink('/signin/link#hblink_abc', 'https://bench.example/')).toBe('https://bench.example/signin/link#hblink_abc');
  });
  it('keeps an absolute link', () => {
    expect(absoluteLink('https://bench.example/signin/link#hblink_x', 'http://other')).toBe('https://bench.example/signin/link#hblink_x');
  });
});
