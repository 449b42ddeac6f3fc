// History filters live on the server and in the URL: filter by experiment, reload, share.
import { expect, test } from './fixtures';
import { shot, startRun } from './helpers';

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
