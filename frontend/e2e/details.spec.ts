// Issue 13's small things, in the browser: a run waiting on a busy host shows its queue position;
// cancel asks first and a cancelled run does not read "100 %"; History exports what it lists; the
// Hosts card shows the disks and NICs the runner reports.
import { expect, test } from './fixtures';
import { HOST, downloadText, startRun, waitForRun } from './helpers';

test('a run behind a busy host shows its queue position; cancel asks, and the cancelled run is not at 100 %', async ({ page, request }) => {
  const busy = await startRun(request, 'cpu', { op: 'fp64', threads: [1], repeats: 1, duration_s: 8, warmup_s: 0 });
  const waiting = await startRun(request, 'cpu', { op: 'fp64', threads: [1], repeats: 1, duration_s: 1, warmup_s: 0 });
  await page.goto(`/runs/${waiting}`);
  await expect(page.getByRole('status', { name: 'Queue position' })).toContainText(`Position 2 in the queue of ${HOST}`);
  await expect(page.getByRole('status', { name: 'Queue position' }).getByRole('link', { name: `#${busy}` })).toBeVisible();

  await page.getByRole('button', { name: 'Cancel run' }).click();
  const dialog = page.getByRole('dialog', { name: `Cancel run #${waiting}?` });
  await expect(dialog).toContainText('without results');
  await dialog.getByRole('button', { name: 'Keep it running' }).click();
  await expect(dialog).toHaveCount(0);
  await page.getByRole('button', { name: 'Cancel run' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel the run' }).click();
  await expect(page.getByRole('region', { name: 'Run details' })).toContainText(/cancelled (before it started|after)/);
  await expect(page.getByRole('region', { name: 'Run details' })).not.toContainText('100 %');
  await waitForRun(request, busy, 120_000);
});

test('History exports every listed run as CSV with its verdict', async ({ page }) => {
  await page.goto('/history');
  await expect(page.getByRole('heading', { name: 'History', level: 1 })).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  expect(download.suggestedFilename()).toMatch(/^hostbench-history-.*\.csv$/);
  const text = await downloadText(download);
  const lines = text.trimEnd().split('\n');
  expect(lines[0]).toBe('run_id,job_id,host,experiment,status,verdict,verdict_reasons,headline,unit,created_at,started_at,finished_at,expected_duration_s,created_by,params,status_reason');
  expect(lines.length).toBeGreaterThan(1);
  await expect(page.getByRole('status').filter({ hasText: /exported \d+ run/ })).toBeVisible();
});

test('the Hosts card lists the disks and NICs the runner reports', async ({ page }) => {
  await page.goto('/');
  const card = page.getByRole('article').filter({ has: page.getByRole('heading', { name: HOST, level: 2 }) });
  await expect(card).toBeVisible();
  const facts = card.locator('dt', { hasText: /^Disks$/ }).locator('xpath=following-sibling::dd[1]');
  await expect(facts).not.toContainText('not reported yet');
  await expect(facts).toContainText(/GiB/);
  await expect(card.locator('dt', { hasText: /^NICs$/ }).locator('xpath=following-sibling::dd[1]')).not.toContainText('not reported yet');
});

test('the memory form asks for a block size only where the op uses one', async ({ page }) => {
  await page.goto('/jobs/new');
  await page.getByLabel('Experiment').selectOption('memory');
  await page.getByLabel('Op', { exact: true }).selectOption('stream_triad');
  await expect(page.getByLabel('Block sizes')).toHaveCount(0);
  await page.getByLabel('Op', { exact: true }).selectOption('copy');
  await expect(page.getByLabel('Block sizes')).toBeVisible();
});

test('/docs and /redoc render with every request outside this server blocked', async ({ page, baseURL }) => {
  const origin = new URL(baseURL ?? 'http://127.0.0.1:8000').origin;
  const outside: string[] = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    outside.push(url);
    return route.abort();
  });
  await page.goto('/docs');
  await expect(page.locator('.swagger-ui .title')).toContainText('hostbench', { timeout: 30_000 });
  await expect(page.getByText('/api/runs/{run_id}').first()).toBeVisible();
  await page.goto('/redoc');
  await expect(page.locator('redoc, .redoc-wrap').first()).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole('heading', { name: /hostbench/ }).first()).toBeVisible();
  expect(outside).toEqual([]);
});
