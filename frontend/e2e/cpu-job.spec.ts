// A person registers nothing here: the caller has started the backend and the runners. They open the
// dashboard, start a tiny CPU job from the host card, watch it live, and read the result.
import { expect, test } from './fixtures';
import { HOST, arrivals as readArrivals, openHostCard, recordArrivals, shot } from './helpers';

test('a tiny CPU job runs live and ends with a GFLOP/s result for 1 thread', async ({ page }) => {
  await page.addInitScript(recordArrivals);
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Hosts', level: 1 })).toBeVisible();
  const card = await openHostCard(page, HOST);
  await expect(card.getByText('Sockets × cores × threads')).toBeVisible();
  await expect(page.getByRole('status', { name: 'System health' })).toContainText(/runner/);

  await card.getByRole('link', { name: /^New job on / }).click();
  await expect(page).toHaveURL(/\/jobs\/new\?host=\d+/);
  await page.getByLabel('Experiment').selectOption('cpu');
  await page.getByLabel(/^threads/i).fill('1');
  await page.getByLabel(/^repeats/i).fill('1');
  await page.getByLabel(/^duration/i).fill('3');
  await page.getByLabel(/^warm-?up/i).fill('0');
  await expect(page.getByText(/Estimated duration/)).toContainText('3 s');
  await page.screenshot({ path: shot('new-job.png'), fullPage: true });
  await page.getByRole('button', { name: 'Start run' }).click();

  await expect(page).toHaveURL(/\/runs\/\d+$/);
  const chart = page.getByRole('figure', { name: /live throughput/i });
  await expect(chart).toBeVisible();
  await expect
    .poll(async () => Number(await chart.getAttribute('data-points')), { timeout: 90_000, message: 'live points on the chart' })
    .toBeGreaterThanOrEqual(2);

  const arrivals = await readArrivals(page);
  const sorted = [...arrivals].sort((a, b) => a - b);
  expect(sorted.length).toBeGreaterThan(0);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Infinity;
  const worst = sorted[sorted.length - 1] ?? Infinity;
  console.log(`measurement -> browser: median ${(median * 1000).toFixed(0)} ms, max ${(worst * 1000).toFixed(0)} ms over ${sorted.length} live samples`);
  expect(median).toBeLessThan(1.0);

  const results = page.getByRole('table', { name: /mean ± stddev/ });
  await expect(results).toBeVisible({ timeout: 120_000 });
  const oneThread = results.getByRole('row').filter({ has: page.getByRole('rowheader', { name: '1', exact: true }) });
  await expect(oneThread).toHaveCount(1);
  await expect(oneThread).toContainText(/\d[\d,.]* \(one repeat\)/); // repeats 1: no spread to show
  await expect(oneThread).toContainText('GFLOP/s');
  // Efficiency and validity come from the backend and sit next to the figure.
  await expect(oneThread).toContainText(/of peak|peak n\/a/);
  await expect(oneThread).toContainText(/valid|invalid|disturbed|oversubscribed|CPU lost|throttled/);
  await oneThread.getByText('details').click();
  await expect(oneThread.getByRole('term').filter({ hasText: 'Min' })).toBeVisible();
  await expect(page.getByRole('figure', { name: /FP64 FLOPS: throughput/ })).toHaveAttribute('data-bars', '1');
  await expect(page.getByRole('progressbar', { name: 'Progress' })).toBeVisible();
  // One phase marker: 1 thread, repeat 1 (no warm-up).
  await expect(chart).toHaveAttribute('data-markers', '1');
  await expect(chart.getByText('Phases (1)')).toBeVisible();

  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot('cpu-run.png'), fullPage: true });

  // Phone width: charts and tables shrink into the page (wide tables scroll inside their box).
  await page.setViewportSize({ width: 390, height: 844 });
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), { message: 'no page-level horizontal scroll' })
    .toBeLessThanOrEqual(1);
  await page.screenshot({ path: shot('cpu-run-phone.png'), fullPage: true });
});
