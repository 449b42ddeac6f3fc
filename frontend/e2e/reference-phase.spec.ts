// A CPU run with reference tools: after our kernel, the runner runs hpcc (HPL) and likwid-bench on the same
// host; the run page says which one runs, which of how many, what it runs and about how long it has left by its
// usual time (the server's cost model), not a frozen 0 % "live".
import { expect, test } from './fixtures';
import { shot, startRun, waitForRun } from './helpers';

test('the run page names the reference tool that runs, with its time left', async ({ page, request }) => {
  const id = await startRun(request, 'cpu', { op: 'fp64', threads: [1], repeats: 1, duration_s: 1, warmup_s: 0, reference: true });
  await page.goto(`/runs/${id}`);
  const phase = page.locator('.run-phase');
  await expect(phase).toContainText(/running \(reference 1 of \d\)/, { timeout: 180_000 });
  await expect(phase).toContainText(/about .* left|past its usual|running for/);
  await expect(page.getByRole('progressbar', { name: 'Progress' })).toBeVisible();
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot('run-reference-phase.png'), fullPage: true });
  console.log(`reference phase: ${await phase.textContent()}`);
  // the run ends with its reference figures, leaving the host idle for the specs after this one
  expect(['succeeded', 'untrusted']).toContain(await waitForRun(request, id, 600_000));
});
