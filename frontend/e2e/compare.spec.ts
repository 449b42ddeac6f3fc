// Two tiny CPU runs, picked in History, compared against a chosen baseline; the comparison and one
// run exported as CSV with units.
import { expect, test } from './fixtures';
import { TINY_CPU, downloadText, shot, startRun, waitForRun } from './helpers';

test.describe.serial('compare and export', () => {
  let a = 0;
  let b = 0;

  test.beforeAll(async ({ request }) => {
    a = await startRun(request, 'cpu', TINY_CPU);
    b = await startRun(request, 'cpu', TINY_CPU);
    for (const id of [a, b]) expect(['succeeded', 'untrusted']).toContain(await waitForRun(request, id));
  });

  test('two runs picked in History compare against a chosen baseline', async ({ page, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/history?experiment=cpu');
    await expect(page.getByRole('heading', { name: 'History', level: 1 })).toBeVisible();
    await page.getByRole('checkbox', { name: `Select run #${a} to compare` }).check();
    await page.getByRole('checkbox', { name: `Select run #${b} to compare` }).check();
    await page.getByRole('link', { name: 'Compare selected (2)' }).click();
    await expect(page).toHaveURL(new RegExp(`/compare\\?runs=${a},${b}&baseline=${a}$`));

    // The baseline lives in the URL: the radio turns checked once the router has navigated, so click
    // and wait rather than check() (which wants the state changed at once).
    const baselineB = page.getByRole('radio', { name: new RegExp(`#${b}\\b`) });
    await baselineB.click();
    await expect(baselineB).toBeChecked();
    await expect(page).toHaveURL(new RegExp(`baseline=${b}`));
    const ratios = page.getByRole('table', { name: new RegExp(`Ratio to baseline run #${b}`) });
    await expect(ratios).toBeVisible();
    const oneThread = ratios.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /1 thread/ }) });
    await expect(oneThread).toContainText('1.00× (baseline)');
    await expect(oneThread).toContainText(/\d\.\d+×/);
    await expect(oneThread).toContainText('GFLOP/s');
    await expect(page.getByRole('figure', { name: /Side by side \(GFLOP\/s\)/ })).toHaveAttribute('data-bars', '2');

    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download comparison CSV' }).click()]);
    expect(csv.suggestedFilename()).toBe(`hostbench-compare-${a}-${b}.csv`);
    const lines = (await downloadText(csv)).trim().split('\n');
    expect(lines[0]).toContain('# hostbench comparison');
    expect(lines[1]).toBe('run_id,host,experiment,baseline,op,block_bytes,threads,unit,n,mean,stddev,min,max,ci95_low,ci95_high,efficiency,valid,invalid_reason,verdict,verdict_reasons,ratio_to_baseline');
    expect(lines.filter((l) => l.includes(',GFLOP/s,'))).toHaveLength(2);

    await page.getByRole('button', { name: 'Copy link' }).first().click();
    await expect(page.getByText('Link copied')).toBeVisible();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(page.url());

    await page.screenshot({ path: shot('compare.png'), fullPage: true });
  });

  test('a run exports as CSV with its header and units', async ({ page }) => {
    await page.goto(`/runs/${a}`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toBe(`hostbench-run-${a}.csv`);
    const text = await downloadText(download);
    expect(text).toMatch(/^# hostbench run,/);
    expect(text).toContain('op,block_bytes,threads,unit,n,mean,stddev');
    expect(text).toMatch(/\nfp64,,1,GFLOP\/s,2,/);
    expect(text).toContain('seq,t,interval_s,threads,repeat,warmup,value,unit,op,block_bytes');
  });
});
