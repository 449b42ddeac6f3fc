// The dashboard under its Content-Security-Policy (backend/app/core/headers.py): every page renders, with
// data in its tables and charts, with no CSP violation and no page error, and the policy, nosniff and the
// framing refusals come with every page.
import { expect, test } from './fixtures';
import { TINY_CPU, firstHostId, waitForRun } from './helpers';

const PAGES = ['/', '/jobs/new', '/suites', '/schedules', '/history', '/trends', '/fleet-view', '/account', '/users',
  '/audit', '/no-such-page'];

test('every page renders under the policy without a violation', async ({ page, request }) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content.Security.Policy|Refused to (execute|load|apply|connect|frame)/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  const hostId = await firstHostId(request);
  const run = async () => {
    const res = await request.post('/api/jobs', { data: { host_ids: [hostId], experiment: 'cpu', params: TINY_CPU } });
    expect(res.status(), await res.text()).toBe(201);
    return ((await res.json()) as { runs: { id: number }[] }).runs[0]?.id as number;
  };
  const [a, b] = [await run(), await run()];
  await page.goto(`/runs/${a}`); // the live chart while it runs
  for (const id of [a, b]) await waitForRun(request, id);
  for (const path of [...PAGES, `/runs/${a}`, `/compare?runs=${a},${b}&baseline=${a}`, `/report?runs=${a},${b}`]) {
    const r = await page.goto(path);
    expect(r?.status(), path).toBe(200);
    const headers = r?.headers() ?? {};
    expect(headers['content-security-policy'], path).toContain("script-src 'self'");
    expect(headers['content-security-policy'], path).toContain("frame-ancestors 'none'");
    expect(headers['x-content-type-options'], path).toBe('nosniff');
    expect(headers['x-frame-options'], path).toBe('DENY');
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
    await page.waitForLoadState('networkidle');
  }
  expect(violations).toEqual([]);
});
