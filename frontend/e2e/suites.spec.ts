// Suites: the built-in suites as cards (items in words, the expected duration on one host), Run suite on the
// e2e host, the suite run page as one unit (progress over all its runs), Cancel suite with its confirmation; a
// viewer reads the page but is offered no Run button. The suite run is cancelled in afterEach whatever happens,
// so no run of it stays queued on the shared e2e host for the specs after this one.
import { expect, test } from './fixtures';
import { HOST, PEER, firstHostId, hostBox, shot } from './helpers';
import { USERS, signIn } from './auth';

let started: number | null = null;

test.afterEach(async ({ request }) => {
  if (started === null) return;
  const res = await request.post(`/api/suite-runs/${started}/cancel`);
  expect([202, 404]).toContain(res.status());
  started = null;
});

/** "1 min 36 s", as the dashboard's formatDuration writes whole seconds. */
function duration(seconds: number): string {
  const s = Math.round(seconds);
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return m ? (rest ? `${m} min ${rest} s` : `${m} min`) : `${rest} s`;
}

test('the Quick health check: run it on the e2e host, watch it as one unit, cancel it', async ({ page, request }) => {
  await firstHostId(request); // the e2e host is online
  const suites = (await (await request.get('/api/suites')).json()) as {
    data: { id: string; title: string; items: unknown[]; expected_duration_one_host_s: number }[];
  };
  const quick = suites.data.find((s) => s.id === 'quick');
  expect(quick).toBeTruthy();

  await page.goto('/suites');
  await expect(page.getByRole('heading', { name: 'Suites', level: 1 })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Suites' })).toHaveAttribute('aria-current', 'page');
  const card = page.getByRole('article', { name: 'Quick health check' });
  await expect(card).toBeVisible();
  const items = card.getByRole('listitem');
  await expect(items).toHaveCount(quick!.items.length);
  await expect(items.first()).toContainText('ops fp64, int32 · 1, 2 threads · 1 s each, 2 repeats');
  await expect(card).toContainText('ops copy, stream_triad, latency');
  await expect(card).toContainText(`Cap on one host: ≈ ${duration(quick!.expected_duration_one_host_s)}`);

  // Only the e2e host: the network-between-hosts items of other suites would need the peer.
  if (await hostBox(page, PEER).isChecked()) await hostBox(page, PEER).uncheck();
  await hostBox(page, HOST).check();
  // the server's estimate for the host picked (the one model), its cap apart
  const hostId = await firstHostId(request);
  const est = (await (await request.post('/api/suite-runs/estimate', { data: { suite: 'quick', host_ids: [hostId], peer_host_id: null } })).json()) as {
    typical_s: number;
    cap_s: number;
  };
  await expect(card).toContainText(`For the host picked: about ${duration(est.typical_s)}`);
  await expect(card).toContainText(`cap ${duration(est.cap_s)}`);
  const full = page.getByRole('article', { name: 'Full system report' });
  await expect(full).toContainText('only when two hosts are picked');
  // A peer serves the two-host items: the full suite then runs them once per host picked, against the peer.
  const peerSelect = page.getByLabel('Peer for the two-host items');
  await peerSelect.selectOption({ label: PEER });
  await expect(full).toContainText(`4 two-host items against ${PEER}, once per host picked`);
  await peerSelect.selectOption({ label: 'None: the first two hosts picked' });
  await expect(full).toContainText('only when two hosts are picked');

  const created = page.waitForResponse((r) => r.url().endsWith('/api/suite-runs') && r.request().method() === 'POST');
  await card.getByRole('button', { name: 'Run suite' }).click();
  const res = await created;
  expect(res.status(), await res.text()).toBe(201);
  const sr = (await res.json()) as { id: number; runs_total: number };
  started = sr.id;

  await expect(page).toHaveURL(new RegExp(`/suite-runs/${sr.id}$`));
  await expect(page.getByRole('heading', { name: `Quick health check · suite run #${sr.id}`, level: 1 })).toBeVisible();
  const summary = page.getByRole('region', { name: 'Suite run' });
  await expect(summary).toContainText(new RegExp(`\\d+ of ${sr.runs_total} runs done`));
  await expect(summary.getByText('running', { exact: true })).toBeVisible();
  const rows = page.getByRole('table', { name: `Runs of suite run #${sr.id}` }).locator('tbody tr');
  await expect(rows).toHaveCount(sr.runs_total);
  await expect(rows.first().getByRole('link')).toHaveAttribute('href', /^\/runs\/\d+$/);
  await expect(rows.first()).toContainText(HOST);
  await page.screenshot({ path: shot('suites.png'), fullPage: true });

  await page.getByRole('button', { name: 'Cancel suite' }).click();
  const dialog = page.getByRole('dialog', { name: `Cancel suite run #${sr.id}?` });
  await expect(dialog).toContainText('ends cancelled');
  await dialog.getByRole('button', { name: 'Cancel the suite' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(summary.getByText('cancelled', { exact: true })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Cancel suite' })).toHaveCount(0);
  for (const row of await rows.all()) await expect(row).toContainText('cancelled');
  started = null;
  // an ended suite leads with its summary (issue 32)
  await expect(page.getByRole('region', { name: 'Summary' })).toContainText(new RegExp(`0 of ${sr.runs_total} runs succeeded \\(${sr.runs_total} cancelled\\)`));
  await page.screenshot({ path: shot('suite-run-ended.png'), fullPage: true });
  // Its report: every run of the suite run in one document.
  await page.getByRole('link', { name: 'Report', exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/report\\?suite=${sr.id}$`));
  await expect(page.getByRole('heading', { name: `Report: suite run ${sr.id} (Quick health check)`, level: 1 })).toBeVisible();
  await page.goBack();
  // The recent list carries it.
  await page.getByRole('link', { name: 'All suites' }).click();
  await expect(page.getByRole('table', { name: 'Recent suite runs' }).getByRole('link', { name: `#${sr.id} Quick health check` })).toBeVisible();
});

test.describe('as a viewer', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('reads the suites but is offered no Run button', async ({ page }) => {
    await signIn(page, USERS.viewer, undefined, '/suites');
    await expect(page.getByRole('heading', { name: 'Suites', level: 1 })).toBeVisible();
    await expect(page.getByRole('article', { name: 'Quick health check' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Run suite' })).toHaveCount(0);
    await expect(page.getByRole('table', { name: 'Recent suite runs' })).toBeVisible();
  });
});
