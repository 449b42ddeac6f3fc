// The report of two real runs (a tiny CPU run and a short trace): reached from History's selection, every section
// on the page, the self-contained HTML download checked against the report's own numbers, and the screenshots.
import { expect, test } from './fixtures';
import { TINY_CPU, downloadText, shot, startRun, waitForRun } from './helpers';

interface Row { n: number; mean: number; stddev: number; unit: string; ci95_low: number | null; ci95_high: number | null; verdict: string }
interface ReportDoc { runs: { id: number; result: { rows: Row[]; verdict: string } | null }[]; areas: { area: string; source: string }[] }

/** The file's number format (backend/app/reports/html.py fmt): four significant digits, plain notation. */
const fmt = (v: number) => (v === 0 ? '0' : v.toFixed(Math.max(0, Math.min(6, 3 - Math.floor(Math.log10(Math.abs(v)))))));

test('a report of real runs: every section, and an HTML file that references nothing outside itself', async ({ page, request }) => {
  const cpu = await startRun(request, 'cpu', TINY_CPU);
  const trace = await startRun(request, 'cpu_trace', { op: 'fp64', threads: 1, duration_s: 3 });
  for (const id of [cpu, trace]) expect(['succeeded', 'untrusted']).toContain(await waitForRun(request, id));

  await page.goto('/history?experiment=cpu');
  await page.getByRole('checkbox', { name: `Select run #${cpu} to compare` }).check();
  await expect(page.getByRole('link', { name: 'Report (1)' })).toHaveAttribute('href', `/report?runs=${cpu}`);

  await page.goto(`/report?runs=${cpu},${trace}`);
  const report = page.getByRole('article', { name: 'Report' });
  await expect(report.getByRole('heading', { name: `Report: runs ${cpu}, ${trace}`, level: 1 })).toBeVisible();
  // issue 32: one screen at the top says what was measured, the headlines with their verdicts, what to look at first
  const summary = report.getByRole('region', { name: 'Summary' });
  await expect(summary).toContainText('Measured: CPU throughput (1), CPU trace (1) on e2e-host, from ');
  await expect(summary.getByRole('list', { name: 'Look at first' })).toBeVisible();
  await expect(summary.locator('tbody tr')).toHaveCount(2);
  await expect(summary.locator('tbody tr').first()).toContainText(/best [\d.,]+ GFLOP\/s|no valid row/);
  expect(await summary.evaluate((el) => el.getBoundingClientRect().top)).toBeLessThan(await report.getByRole('region', { name: 'Machines' }).evaluate((el) => el.getBoundingClientRect().top));
  await expect(report.getByRole('region', { name: 'Machines' })).toContainText('e2e-host');
  await expect(report.getByRole('region', { name: 'Machines' })).toContainText('CPU');
  const area = report.getByRole('region', { name: 'CPU', exact: true });
  await expect(area.getByRole('heading', { name: new RegExp(`Run #${cpu}: CPU throughput on e2e-host`) })).toBeVisible();
  await expect(area.getByRole('heading', { name: new RegExp(`Run #${trace}: CPU trace on e2e-host`) })).toBeVisible();
  const table = area.getByRole('region', { name: `Run ${cpu}` }).locator('table.report-rows');
  await expect(table).toContainText('95 % CI');
  await expect(table).toContainText(/\d ± \d.* GFLOP\/s/);
  await expect(table).toContainText(/GFLOP\/s = /); // the peak with its arithmetic
  await expect(area.getByRole('region', { name: 'Verdict' }).first()).toBeVisible();
  await expect(report.getByRole('region', { name: 'Methodology' })).toContainText('docs/methodology/cpu.md');
  await page.screenshot({ path: shot('report.png'), fullPage: true });
  await page.emulateMedia({ media: 'print' });
  await page.screenshot({ path: shot('report-print.png'), fullPage: true });
  await page.emulateMedia({ media: 'screen' });

  const [download] = await Promise.all([page.waitForEvent('download'), report.getByRole('link', { name: 'Download HTML' }).click()]);
  const html = await downloadText(download);
  expect(html.replaceAll('xmlns="http://www.w3.org/2000/svg"', '')).not.toMatch(/(https?:)?\/\/[a-z0-9]/i);
  expect(html).not.toMatch(/<(link|img|iframe)\b|\bsrc=/i);
  // the summary first; no timestamp with fractions of a second anywhere in the file (issue 32)
  expect(html.indexOf('id="summary"')).toBeGreaterThan(0);
  expect(html.indexOf('id="summary"')).toBeLessThan(html.indexOf('id="machines"'));
  expect(html).not.toMatch(/\d{2}:\d{2}:\d{2}\.\d/);
  // the file as a reader opens it: its first screen and a chart, photographed
  const file = await page.context().newPage();
  await file.setViewportSize({ width: 1200, height: 900 });
  await file.setContent(html);
  await expect(file.locator('#summary')).toContainText('Look at first');
  await file.screenshot({ path: shot('report-html.png') });
  await file.locator('section.run svg').first().screenshot({ path: shot('report-html-chart.png') });
  await file.close();
  const doc = (await (await request.get(`/api/report?runs=${cpu},${trace}`)).json()) as ReportDoc;
  for (const run of doc.runs) {
    for (const row of run.result?.rows ?? []) {
      // one repeat has no spread to state (issue 32): "47.67 GFLOP/s (one repeat)", never "± 0"
      expect(html).toContain(row.n > 1 ? `${fmt(row.mean)} ± ${fmt(row.stddev)} ${row.unit}` : `${fmt(row.mean)} ${row.unit} (one repeat)`);
      if (row.ci95_low !== null && row.ci95_high !== null) expect(html).toContain(`${fmt(row.ci95_low)} – ${fmt(row.ci95_high)} ${row.unit}`);
    }
  }
  const embedded = JSON.parse((/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)?.[1] ?? '{}').replaceAll('<\\/', '</')) as ReportDoc;
  expect(embedded.runs.map((r) => r.result)).toEqual(doc.runs.map((r) => r.result));
});
