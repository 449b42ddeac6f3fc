// A 5-second CPU trace started from the form: the trace view with min/mean/max, its chart saved as
// PNG, and the page in both themes.
import { expect, test } from './fixtures';
import { downloadBytes, expectLiveSamples, openNewJob, recordArrivals, shot } from './helpers';

test('a 5 s CPU trace shows its line, min / mean / max, and saves as PNG', async ({ page }) => {
  await page.addInitScript(recordArrivals);
  await openNewJob(page, 'cpu_trace');
  await page.getByLabel(/^threads/i).fill('1');
  await page.getByLabel(/^duration/i).fill('5');
  await expect(page.getByText(/Estimated duration/)).toContainText('5 s');
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  await expectLiveSamples(page);

  const trace = page.getByRole('figure', { name: /^CPU trace/ });
  await expect(trace).toBeVisible({ timeout: 90_000 });
  expect(Number(await trace.getAttribute('data-points'))).toBeGreaterThanOrEqual(4);
  const summary = trace.getByRole('definition');
  await expect(summary.nth(0)).toHaveText(/^\d+$/);
  for (const name of ['Min', 'Mean', 'Max']) {
    await expect(trace.getByRole('term').filter({ hasText: new RegExp(`^${name}$`) })).toBeVisible();
  }
  await expect(trace).toContainText(/\d[\d,.]* GFLOP\/s/);
  await expect(trace).toContainText(/Throttling(none detected|sustained drop)/);
  await expect(page.getByRole('table', { name: /mean ± stddev/ })).toBeVisible();

  const [png] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PNG of CPU trace' }).click()]);
  expect(png.suggestedFilename()).toMatch(/^hostbench-run-\d+-trace\.png$/);
  expect((await downloadBytes(png)).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');

  await page.screenshot({ path: shot('trace.png'), fullPage: true });
  await page.getByRole('button', { name: 'Switch to dark theme' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: shot('trace-dark.png'), fullPage: true });
  await page.getByRole('button', { name: 'Switch to light theme' }).click();
});
