import { describe, expect, it } from 'vitest';
import { paths } from '../../config/paths';
import { currentPath, safeNext } from './next';

describe('safeNext', () => {
  it('keeps a path on this site, query and fragment included', () => {
    expect(safeNext('/runs/7')).toBe('/runs/7');
    expect(safeNext('/history?experiment=cpu&page=2')).toBe('/history?experiment=cpu&page=2');
  });

  it('refuses anything that leaves the site, and the sign-in pages themselves', () => {
    for (const bad of ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)', '', null, undefined, '/signin', '/signin/link#x']) {
      expect(safeNext(bad)).toBe('/');
    }
  });

  it('round-trips through the sign-in address', () => {
    const next = currentPath({ pathname: '/history', search: '?status=failed', hash: '' });
    const url = new URL(paths.signIn(next), 'http://x');
    expect(url.pathname).toBe('/signin');
    expect(safeNext(url.searchParams.get('next'))).toBe('/history?status=failed');
    expect(paths.signIn('/')).toBe('/signin');
  });
});
