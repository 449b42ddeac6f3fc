// Guards the folder rules: app → features → (components, lib, config); no feature imports another
// feature; shared folders import no feature and no app code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [p] : [];
  });
}

function area(path: string): string {
  const parts = relative(SRC, path).split(sep);
  if (parts[0] === 'features') return `features/${parts[1]}`;
  return parts[0] ?? '';
}

describe('import boundaries', () => {
  const violations: string[] = [];
  for (const file of files(SRC)) {
    const from = area(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/from\s+['"](\.[^'"]+)['"]/g)) {
      const to = area(resolve(dirname(file), m[1] as string));
      if (to === from) continue;
      const shared = ['components', 'lib', 'config'];
      const ok =
        from === 'app' || from === 'main.tsx'
          ? true
          : from.startsWith('features/')
            ? shared.includes(to)
            : from === 'components'
              ? ['lib', 'config'].includes(to)
              : from === 'lib'
                ? to === 'config'
                : from === 'config'
                  ? false
                  : true;
      if (!ok) violations.push(`${relative(SRC, file)} imports ${m[1]} (${from} → ${to})`);
    }
  }

  it('features import only shared folders, never each other or app', () => {
    expect(violations).toEqual([]);
  });
});
