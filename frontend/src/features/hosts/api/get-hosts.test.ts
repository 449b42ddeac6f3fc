import { afterEach, describe, expect, it, vi } from 'vitest';
import { host } from '../../../test/fixtures';
import { jsonResponse } from '../../../test/render';
import { getAllHosts } from './get-hosts';

afterEach(() => vi.unstubAllGlobals());

describe('getAllHosts', () => {
  it('reads page after page until it holds every host (1,002 hosts, pages of 1,000)', async () => {
    const fleet = Array.from({ length: 1002 }, (_, i) => ({ ...host, id: i + 1, name: `h${i}` }));
    const offsets: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (req: Request) => {
        const offset = Number(new URL(req.url).searchParams.get('offset') ?? '0');
        offsets.push(String(offset));
        return jsonResponse({ data: fleet.slice(offset, offset + 1000), count: fleet.length });
      }),
    );
    const all = await getAllHosts();
    expect(all.count).toBe(1002);
    expect(all.data.map((h) => h.id)).toEqual(fleet.map((h) => h.id));
    expect(offsets).toEqual(['0', '1000']);
  });
});
