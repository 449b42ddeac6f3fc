// Trends and the fleet view, from real runs of e2e-host: a disk metric's trend with its CI band, a
// threshold added in the page and the event the next run raised (beat's evaluator, every 10 s); the
// fleet view with e2e-host's newest headline figures, each cell opening its trend. A busy test machine
// disturbs runs (drawn, marked "left out", not judged; the fleet view says "no valid run yet"): the disk
// runs wait for a quiet CPU, measure a disturbed phase again and repeat until stable, as the suites do.
import { expect, test } from './fixtures';
import { HOST, TINY_CPU, firstHostId, shot, startRun, waitForRun } from './helpers';

const DISK = {
  ops: ['seq_read'], blocks: [1048576], file_size: 16777216, threads: [1], repeats: 2, duration_s: 0.5, warmup_s: 0,
  stable_cv: 0.1, max_repeats: 6, quiet_wait_s: 5, disturbed_retries: 3,
};
const METRIC = 'disk|seq_read|1|1048576';

test.describe.serial('trends and the fleet view', () => {
  let hostId = 0;

  test.beforeAll(async ({ request }) => {
    hostId = await firstHostId(request);
    const ids = [await startRun(request, 'disk', DISK), await startRun(request, 'cpu', TINY_CPU), await startRun(request, 'disk', DISK)];
    for (const id of ids) expect(['succeeded', 'untrusted']).toContain(await waitForRun(request, id));
  });

  test('a metric of a host over time: its runs, a threshold, the event a run raised', async ({ page, request }) => {
    test.setTimeout(180_000);
    await page.goto('/trends');
    await expect(page.getByRole('heading', { name: 'Trends', level: 1 })).toBeVisible();
    await page.getByLabel('Host or label').selectOption({ label: HOST });
    await expect(page).toHaveURL(new RegExp(`/trends\\?host=${hostId}$`));
    const metric = page.getByLabel('Metric');
    // a metric in words (issue 32): the experiment, the op, the size and count in its kernel's terms, "1 run"
    await expect(metric.locator('option', { hasText: /^Disk: Sequential read, 1 MiB blocks, 1 thread \(MB\/s, \d+ runs?\)$/ })).toHaveCount(1);
    await metric.selectOption(METRIC);
    await expect(page).toHaveURL(new RegExp(`metric=${encodeURIComponent(METRIC).replace(/\|/g, '%7C')}`));

    const trend = page.getByRole('region', { name: 'Trend' });
    await expect(trend.getByRole('heading', { name: 'Disk: Sequential read, 1 MiB blocks, 1 thread (MB/s; higher is better)' })).toBeVisible();
    await expect(trend.getByRole('img', { name: /: \d+ valid runs, \d+ left out, 0 changes$/ })).toBeVisible();
    await expect(trend).toContainText(/\d+ runs?; \d+ left out of the detection because their verdict is not valid/);
    await expect(page.getByRole('region', { name: 'Changes' })).toContainText('None in these runs.');

    // a threshold the next run crosses (twice the best figure so far), added in the page
    const res = await request.get(`/api/trends/series?host_id=${hostId}&experiment=disk&op=seq_read&threads=1&block_bytes=1048576`);
    const best = Math.max(...((await res.json()) as { points: { mean: number }[] }).points.map((p) => p.mean));
    const limit = String(Math.ceil(best * 2));
    const thresholds = page.getByRole('region', { name: 'Thresholds' });
    await thresholds.getByLabel('Flag when').selectOption('below');
    await thresholds.getByLabel('Value (MB/s)').fill(limit);
    await thresholds.getByRole('button', { name: 'Add threshold' }).click();
    await expect(thresholds).toContainText(/below [\d,]+ MB\/s \(set by e2e-admin\)/);

    // the next run crosses it: beat's evaluator records the event; the page shows it with its notifications
    const next = await startRun(request, 'disk', DISK);
    expect(['succeeded', 'untrusted']).toContain(await waitForRun(request, next));
    const events = page.getByRole('region', { name: 'Events' });
    // (a run that finished shortly before the threshold and was not looked at yet is judged by it too)
    const event = events.getByRole('listitem').filter({ has: page.getByRole('link', { name: `run ${next}`, exact: true }) });
    await expect(event).toContainText('is below the threshold', { timeout: 60_000 });
    await expect(event).toHaveCount(1);
    await expect(event).toContainText('webhook skipped (no webhook URL is set');
    await expect(event).toContainText('e-mail skipped (SMTP is not configured');
    await page.screenshot({ path: shot('trends.png'), fullPage: true });

    await thresholds.getByRole('button', { name: /^Delete threshold \d+$/ }).click();
    await expect(thresholds).toContainText('No threshold on this metric here.');
  });

  test('the fleet view: every host by headline figure, each cell opening its trend', async ({ page }) => {
    await page.goto('/fleet-view');
    await expect(page.getByRole('heading', { name: 'Fleet view', level: 1 })).toBeVisible();
    const table = page.getByRole('table', { name: 'Fleet: hosts by headline figure' });
    await expect(table.getByRole('columnheader', { name: /CPU FP64, most threads/ })).toBeVisible();
    await expect(table.getByRole('columnheader', { name: /Disk sequential read, best/ })).toBeVisible();
    const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: HOST, exact: true }) });
    // a valid CPU figure, or, on a busy machine, why there is none (headlines use valid rows only)
    await expect(row.getByRole('link', { name: /GFLOP\/s/ }).or(row.getByText(/^no valid run yet; \d+ /)).first()).toBeVisible();
    // the disk column's link (memory copy is in MB/s too, once the other specs have run memory jobs)
    const disk = row.locator('a[href*="metric=disk%7C"]');
    await expect(disk).toBeVisible();
    await expect(disk).toHaveAccessibleName(/MB\/s/);
    await expect(page.getByText(/Outliers \(\d+\): median ± 3 × 1\.4826 × MAD/)).toBeVisible();
    await page.screenshot({ path: shot('fleet-view.png'), fullPage: true });

    await disk.click();
    await expect(page).toHaveURL(new RegExp(`/trends\\?host=${hostId}&metric=disk%7Cseq_read%7C1%7C1048576$`));
    await expect(page.getByRole('region', { name: 'Trend' })).toBeVisible();
  });
});
