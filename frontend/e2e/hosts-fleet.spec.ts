// The Hosts page at fleet size (issue 32): 1,000 hosts registered through the real API (POST /api/runners/register
// with one enrolment token of 1,000 uses, as `Add hosts` makes it), each with its own CPU, memory and labels. The
// page loads in under 2 s and holds them as a table the server searches, filters, sorts and pages; a host's name
// opens its card; New job's picker finds hosts by label. Every host made here is deleted afterwards, so the other
// specs find the two they expect.
import type { APIRequestContext, APIResponse } from '@playwright/test';
import { HOST, openHostCard, shot } from './helpers';
import { expect, test } from './fixtures';

const FLEET = 1000;
const PREFIX = 'fleet-';
const CPUS = ['AMD EPYC 9654 96-Core Processor', 'Intel(R) Xeon(R) Gold 6430', 'Ampere Altra Q80-30'];
const AT_ONCE = 8;
const LOAD_BUDGET_MS = 2000;

const nameOf = (i: number) => `${PREFIX}${String(i).padStart(4, '0')}`;

async function inBatches<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += AT_ONCE) await Promise.all(items.slice(i, i + AT_ONCE).map(work));
}

/** A call the busy server may answer 503 or 429 (admission control): asked again after its Retry-After. */
async function patiently(call: () => Promise<APIResponse>): Promise<APIResponse> {
  for (let i = 0; ; i++) {
    const res = await call();
    if (![429, 503].includes(res.status()) || i >= 30) return res;
    await new Promise((r) => setTimeout(r, 1000 * Math.min(Number(res.headers()['retry-after'] ?? '1') || 1, 10)));
  }
}

async function fleetIds(request: APIRequestContext): Promise<number[]> {
  const res = await request.get(`/api/hosts?q=${PREFIX}&limit=1000`);
  expect(res.status()).toBe(200);
  return ((await res.json()) as { data: { id: number; name: string }[] }).data.filter((h) => h.name.startsWith(PREFIX)).map((h) => h.id);
}

test.afterAll(async ({ request }) => {
  await inBatches(await fleetIds(request), async (id) => {
    expect((await patiently(() => request.delete(`/api/hosts/${id}?history=delete`))).status()).toBe(204);
  });
});

test('1,000 hosts: a table searched, filtered, sorted and paged by the server, loaded in under 2 s', async ({ page, request }) => {
  test.setTimeout(900_000);
  // The enrolment token, as the Add hosts dialog makes it (its screenshot), then used by 1,000 runners' registrations.
  await page.goto('/');
  await page.getByRole('button', { name: 'Add hosts' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add hosts: one token for a fleet' });
  await dialog.getByLabel('Name').fill('rack row A');
  await dialog.getByLabel('Hosts that may join').fill(String(FLEET));
  await dialog.getByLabel('Labels for every host that joins').fill('site=lab, fleet=e2e');
  await dialog.getByRole('button', { name: 'Make the token' }).click();
  await expect(dialog.getByRole('note')).toContainText('This token enrols up to 1,000 hosts until');
  await dialog.getByRole('tab', { name: 'Kubernetes DaemonSet' }).click();
  await expect(dialog.getByTestId('fleet-kubernetes_manifest')).toContainText('kind: "DaemonSet"');
  await dialog.getByRole('tab', { name: 'Shell command' }).click();
  await page.screenshot({ path: shot('add-hosts.png'), fullPage: false });
  await dialog.getByText('The token alone').click();
  const token = (await dialog.getByTestId('enrolment-token').textContent())?.trim() ?? '';
  expect(token).toMatch(/^hbreg_/);
  await dialog.getByRole('button', { name: 'Done' }).click();

  const server = process.env.HOSTBENCH_RUNNER_SERVER ?? '';
  const started = Date.now();
  await inBatches(Array.from({ length: FLEET }, (_, i) => i), async (i) => {
    const res = await patiently(() => request.post(`${server}/api/runners/register`, {
      data: {
        registration_token: token, name: nameOf(i), hostname: `${nameOf(i)}.lab`, version: '0',
        inventory: { cpu: { model: CPUS[i % 3], sockets: 1 + (i % 2), cores_per_socket: 8 * (1 + (i % 4)) }, memory: { total_bytes: (16 + (i % 8) * 16) * 2 ** 30 } },
        labels: { rack: `r${String(i % 20).padStart(2, '0')}`, role: i % 5 === 0 ? 'db' : 'web' },
      },
    }));
    expect(res.status(), await res.text()).toBe(201);
  });
  console.log(`registered ${FLEET} hosts through POST /api/runners/register in ${((Date.now() - started) / 1000).toFixed(1)} s (${AT_ONCE} at once)`);
  const refused = await request.post(`${server}/api/runners/register`, { data: { registration_token: token, name: 'fleet-extra', hostname: 'x', version: '0' } });
  expect(refused.status()).toBe(401); // the 1,001st: the token's uses are spent
  expect(await refused.text()).toContain('no uses left');

  // The registrations are the test's set-up, not the page: wait until the server has digested them (an API call
  // answers within 250 ms again) before the page is timed. The wait is logged.
  const settle = Date.now();
  await expect.poll(async () => {
    const t = Date.now();
    await request.get('/api/auth/me');
    return Date.now() - t;
  }, { timeout: 120_000, intervals: [1000], message: 'the server answers quickly again' }).toBeLessThan(250);
  console.log(`server settled ${((Date.now() - settle) / 1000).toFixed(1)} s after the registrations`);
  // The page, loaded anew: the time from navigation start to the first page of 50 rows drawn with its count, read
  // in the page itself at the first animation frame that shows them (performance.now() counts from navigation).
  await page.goto('/');
  const drawn = await page.waitForFunction(
    () => {
      const rows = document.querySelectorAll('table.hosts-table tbody tr').length;
      const count = [...document.querySelectorAll('[role="status"]')].some((e) => /^Hosts 1–50 of 1,00\d/.test(e.textContent ?? ''));
      return rows === 50 && count ? performance.now() : null;
    },
    null,
    { polling: 'raf', timeout: 30_000 },
  );
  const loadMs = Math.round((await drawn.jsonValue()) as number);
  await expect(page.getByRole('status').filter({ hasText: /^Hosts 1–50 of 1,00\d · page 1 of 21$/ })).toBeVisible();
  await expect(page.getByRole('button', { name: /^Open / })).toHaveCount(50);
  // where the time went: the document, the scripts, each API call (start → end, ms since navigation)
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    const calls = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((e) => /\/(api|assets)\//.test(e.name))
      .map((e) => `${new URL(e.name).pathname} ${e.startTime.toFixed(0)}→${e.responseEnd.toFixed(0)}`);
    return `document ${nav.responseEnd.toFixed(0)}, DOMContentLoaded ${nav.domContentLoadedEventEnd.toFixed(0)}; ${calls.join('; ')}`;
  });
  console.log(`hosts page with ${FLEET + 2} hosts: first page drawn ${loadMs} ms after navigation (${timing})`);
  // soft: the test fails when over budget, and still checks (and photographs) the rest
  expect.soft(loadMs, `first page drawn ${loadMs} ms after navigation`).toBeLessThan(LOAD_BUDGET_MS);

  // Search, filters, sort and pages are the server's: each answer is one page and its count.
  const search = page.getByLabel('Search', { exact: true });
  await search.fill('fleet-0999');
  await expect(page.getByRole('button', { name: /^Open / })).toHaveCount(1);
  await expect(page.getByRole('button', { name: 'Open fleet-0999', exact: true })).toBeVisible();
  await search.fill('');
  await page.getByLabel('Label', { exact: true }).selectOption({ label: 'rack: r07 (50)' });
  await expect(page.getByRole('status').filter({ hasText: /^Hosts 1–50 of 50 · page 1 of 1$/ })).toBeVisible();
  await page.getByLabel('CPU', { exact: true }).selectOption('Ampere Altra Q80-30');
  // i ≡ 7 (mod 20) and i ≡ 2 (mod 3): i ≡ 47 (mod 60), 16 hosts below 1,000 (47, 107, …, 947)
  await expect(page.getByRole('status').filter({ hasText: /^Hosts 1–16 of 16 · page 1 of 1$/ })).toBeVisible();
  await page.getByRole('button', { name: /^Cores/ }).click();
  await page.getByRole('button', { name: /^Cores/ }).click();
  await expect(page.getByRole('columnheader', { name: /^Cores/ })).toHaveAttribute('aria-sort', 'descending');
  const cores = await page.locator('tbody tr td.num').evaluateAll((cells) => cells.filter((_, i) => i % 2 === 0).map((c) => Number(c.textContent)));
  expect(cores).toEqual([...cores].sort((a, b) => b - a));
  expect(cores[0]).toBe(64);
  for (const part of ['label=rack%3Dr07', 'sort=cores', 'order=desc']) expect(page.url()).toContain(part); // a filtered view is a link
  await page.screenshot({ path: shot('hosts-fleet.png'), fullPage: false });

  await page.getByLabel('Label', { exact: true }).selectOption('');
  await page.getByLabel('CPU', { exact: true }).selectOption('');
  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(page.getByRole('status').filter({ hasText: /^Hosts 51–100 of 1,00\d · page 2 of 21$/ })).toBeVisible();
  const card = await openHostCard(page, (await page.getByRole('button', { name: /^Open fleet-/ }).first().textContent())?.trim() ?? '');
  await expect(card.getByRole('region', { name: /^Instance labels of / })).toBeVisible();

  // An unchanged page is a 304 to the ETag the browser holds. These hosts never heartbeat: each goes offline
  // runner_online_s after it registered, which changes its page; once all have, the page holds still.
  await expect.poll(async () => ((await (await request.get('/api/hosts/facets')).json()) as { statuses: { online: number } }).statuses.online,
    { timeout: 60_000, message: 'only the two real runners online' }).toBe(2);
  const etag = (await request.get('/api/hosts?label=rack%3Dr07')).headers().etag ?? '';
  expect((await request.get('/api/hosts?label=rack%3Dr07', { headers: { 'If-None-Match': etag } })).status()).toBe(304);

  // New job: the picker finds hosts by label and by name among 1,002.
  await page.goto('/jobs/new');
  await page.getByLabel('With label').selectOption({ label: 'role: db (200)' });
  await expect(page.getByRole('status').filter({ hasText: '0 ticked · 200 of 1,002 match; the first 100 are listed' })).toBeVisible();
  await page.getByLabel('Find hosts').fill('fleet-099');
  await expect(page.getByRole('checkbox', { name: /^fleet-0995\b/ })).toBeVisible();
  await expect(page.getByRole('checkbox', { name: /^fleet-/ })).toHaveCount(2); // 0990 and 0995
  await page.getByRole('button', { name: 'Tick the 2 matching' }).click();
  await expect(page.getByRole('checkbox', { name: /^fleet-0990\b/ })).toBeChecked();
  await page.getByLabel('With label').selectOption('');
  await page.getByLabel('Find hosts').fill(HOST);
  await expect(page.getByRole('checkbox', { name: new RegExp(`^${HOST}\\b`) })).toBeVisible();
});
