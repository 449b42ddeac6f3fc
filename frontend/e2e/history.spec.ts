// History filters live on the server and in the URL: filter by experiment, reload, share.
import { expect, test } from './fixtures';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillTiming, firstHostId, openNewJob, shot, startRun, waitForRun } from './helpers';

const ROOT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** "4 s", "1 min 5 s", "2 min", "1 h 3 min" (formatDuration) in seconds. */
function seconds(text: string): number {
  const unit: Record<string, number> = { h: 3600, min: 60, s: 1 };
  const parts = [...text.matchAll(/(\d+) (h|min|s)\b/g)];
  expect(parts.length, `"${text}" is a duration`).toBeGreaterThan(0);
  return parts.reduce((sum, m) => sum + Number(m[1]) * (unit[m[2] as string] ?? NaN), 0);
}

test('History filters by experiment, keeps the filter in the URL, and fits a phone', async ({ page, request }) => {
  const trace = await startRun(request, 'cpu_trace', { op: 'fp64', threads: 1, duration_s: 1 });
  const cpu = await startRun(request, 'cpu', { op: 'fp64', threads: [1], repeats: 1, duration_s: 0.5, warmup_s: 0 });

  await page.goto('/history');
  const table = page.getByRole('table', { name: 'Runs, newest first' });
  await expect(table.getByRole('link', { name: `#${trace}`, exact: true })).toBeVisible();
  await expect(table.getByRole('link', { name: `#${cpu}`, exact: true })).toBeVisible();

  await page.getByLabel('Experiment').selectOption('cpu_trace');
  await expect(page).toHaveURL(/\/history\?experiment=cpu_trace$/);
  await expect(table.getByRole('link', { name: `#${cpu}`, exact: true })).toHaveCount(0);
  await expect(table.getByRole('link', { name: `#${trace}`, exact: true })).toBeVisible();
  const experimentCells = table.locator('tbody tr td:nth-child(3)');
  expect(await experimentCells.allTextContents()).toEqual(expect.arrayContaining(['cpu_trace']));
  expect(new Set(await experimentCells.allTextContents())).toEqual(new Set(['cpu_trace']));

  await page.reload();
  await expect(page.getByLabel('Experiment')).toHaveValue('cpu_trace');
  await expect(table.getByRole('link', { name: `#${trace}`, exact: true })).toBeVisible();

  await page.getByLabel('Status').selectOption('cancelled');
  await expect(page).toHaveURL(/experiment=cpu_trace&status=cancelled/);
  await page.getByRole('button', { name: /Clear filters/ }).click();
  await expect(page).toHaveURL(/\/history$/);
  await expect(table.getByRole('link', { name: `#${cpu}`, exact: true })).toBeVisible();
  await page.screenshot({ path: shot('history.png'), fullPage: true });

  await page.setViewportSize({ width: 390, height: 844 });
  await expect(page.getByRole('heading', { name: 'History', level: 1 })).toBeVisible();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(1);
  await page.screenshot({ path: shot('history-phone.png'), fullPage: true });
});

test('the form, History and the run agree on how long a CPU job takes', async ({ page, request }) => {
  // A run ahead on the same host keeps the form's run queued long enough to read History's estimate.
  const busy = await startRun(request, 'cpu', { op: 'fp64', threads: [1], repeats: 1, duration_s: 2, warmup_s: 0 });
  await openNewJob(page, 'cpu');
  await page.getByLabel(/^threads/i).fill('1, 2');
  await fillTiming(page, { repeats: 2, duration: 1, warmup: 0 });
  // the form's cap (the server's, beside its typical time) is the run's expected duration, History's "up to"
  const line = page.getByText(/^Estimated duration:/);
  await expect(line).toContainText(/cap .+, the run's limit/);
  const estimate = (/cap (.+?), the run's limit/.exec((await line.textContent()) ?? '')?.[1] ?? '').trim();
  const expected = seconds(estimate);
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  const id = Number(/\/runs\/(\d+)$/.exec(page.url())?.[1]);
  const run = (await (await request.get(`/api/runs/${id}`)).json()) as { expected_duration_s: number };
  expect(run.expected_duration_s).toBe(expected);

  await page.goto('/history');
  const row = page.getByRole('table', { name: 'Runs, newest first' }).getByRole('row').filter({ has: page.getByRole('link', { name: `#${id}`, exact: true }) });
  const duration = row.getByRole('cell').last();
  await expect(duration).toHaveText(`up to ${estimate}`);

  await waitForRun(request, busy, 120_000);
  expect(['succeeded', 'untrusted']).toContain(await waitForRun(request, id, 120_000));
  await page.reload();
  const took = seconds((await duration.textContent()) ?? '');
  // It measured for the estimated time; what it adds (starting the kernel and its threads, reporting the
  // finish to a busy server) is well under the measuring time.
  expect(took).toBeGreaterThanOrEqual(expected);
  expect(took).toBeLessThan(2 * expected);
});

test('an imported reference output shows in History, marked imported, with its figures and who brought it', async ({ page, request }) => {
  const hostId = await firstHostId(request);
  const text = readFileSync(join(ROOT_DIR, 'common', 'tests', 'fixtures', 'reftools', 'fio-3.33-seqread.json'), 'utf8');
  const res = await request.post(`/api/reference/imports?host_id=${hostId}&tool=fio&file_name=e2e-seqread.json`, {
    data: text,
    headers: { 'Content-Type': 'text/plain' },
  });
  expect(res.status(), await res.text()).toBe(201);
  await page.goto(`/history?host=${hostId}`);
  const section = page.getByRole('region', { name: 'Imported reference outputs' });
  await expect(section).toBeVisible();
  const row = section.getByRole('row').filter({ hasText: 'e2e-seqread.json' }).first();
  await expect(row).toContainText('imported');
  await expect(row).toContainText('fio');
  await expect(row).toContainText(/MB\/s|MiB\/s|IOPS/);
});
