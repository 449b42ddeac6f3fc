// Issue 13: disturbed and oversubscribed runs are never shown as plainly "valid". Two real CPU runs on
// the e2e host (2 CPUs): 4 threads (oversubscribed), and 2 threads while busy processes started here
// take the CPUs (disturbed). The bad results no healthy machine gives (above the peak, failed
// verification, below the physical floor, NaN) come from a third, real runner whose kernel's lines are
// rewritten (injected-runner.ts), as do two details that misled (a spread too wide for a 95 % interval,
// our figure far above iperf3's). Then every finished run this stack holds (the other specs' runs too) is
// opened: none whose API verdict is not "valid" may read "valid" on its page. Screenshots of the flags
// for the closing note.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { startInjectedRunner, type InjectedRunner } from './injected-runner';
import { shot, startRun, waitForRun } from './helpers';

const hog = (): ChildProcess => spawn('python3', ['-c', 'while True: pass'], { stdio: 'ignore' });

test('4 threads on 2 CPUs: the page says oversubscribed, with the threads and CPUs, up front', async ({ page, request }) => {
  const id = await startRun(request, 'cpu', { op: 'fp64', threads: [4], repeats: 2, duration_s: 1, warmup_s: 0 });
  await waitForRun(request, id, 120_000);
  const run = (await (await request.get(`/api/runs/${id}`)).json()) as { result: { verdict: string } };
  expect(run.result.verdict).not.toBe('valid');
  await page.goto(`/runs/${id}`);
  const verdict = page.getByRole('region', { name: 'Verdict' });
  await expect(verdict).toBeVisible();
  await expect(verdict).toHaveAttribute('data-verdict', run.result.verdict);
  await expect(verdict).toContainText(/oversubscribed: 4 threads on \d+ CPUs?/);
  const cell = page.getByRole('table', { name: /mean ± stddev/ }).getByRole('cell').first();
  await expect(cell).not.toHaveAttribute('data-verdict', 'valid');
  await expect(cell.getByText('valid', { exact: true })).toHaveCount(0);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot('verdict-oversubscribed.png'), fullPage: true });
});

test('a competing process takes the CPUs: the page says disturbed, with the CPU share', async ({ page, request }) => {
  const hogs = [hog(), hog()];
  const id = await (async () => {
    try {
      await new Promise((r) => setTimeout(r, 500));
      const started = await startRun(request, 'cpu', { op: 'fp64', threads: [2], repeats: 2, duration_s: 2, warmup_s: 0 });
      await waitForRun(request, started, 120_000);
      return started;
    } finally {
      for (const h of hogs) h.kill('SIGKILL');
    }
  })();
  const run = (await (await request.get(`/api/runs/${id}`)).json()) as { result: { verdict: string; rows: { flags: { kind: string }[] }[] } };
  expect(run.result.rows[0]?.flags.map((f) => f.kind)).toContain('disturbed');
  await page.goto(`/runs/${id}`);
  const verdict = page.getByRole('region', { name: 'Verdict' });
  await expect(verdict).toHaveAttribute('data-verdict', run.result.verdict);
  await expect(verdict).toContainText(/disturbed: CPU share 0\.\d\d/);
  await expect(verdict.getByText('valid', { exact: true })).toHaveCount(0);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot('verdict-disturbed.png'), fullPage: true });
});

test('a trace whose CPU another process took for a while: the stretch is marked "CPU lost", apart from throttling', async ({ page, request }) => {
  const id = await startRun(request, 'cpu_trace', { op: 'fp64', threads: 2, duration_s: 30 });
  // the trace's first samples: then two busy processes take half of each CPU for 12 s
  await expect.poll(async () => ((await (await request.get(`/api/runs/${id}`)).json()) as { last_seq: number }).last_seq, { timeout: 90_000 }).toBeGreaterThanOrEqual(8);
  const hogs = [hog(), hog()];
  await new Promise((r) => setTimeout(r, 12_000));
  for (const h of hogs) h.kill('SIGKILL');
  await waitForRun(request, id, 120_000);
  const run = (await (await request.get(`/api/runs/${id}`)).json()) as {
    result: { verdict: string; trace: { cpu_share: number; stretches: { from_s: number; to_s: number; cause: string }[] } };
  };
  console.log(`trace #${id}: cpu_share ${run.result.trace.cpu_share}, stretches ${JSON.stringify(run.result.trace.stretches)}`);
  expect(run.result.trace.stretches.some((s) => s.cause === 'cpu_lost' && s.to_s - s.from_s >= 5)).toBe(true);
  expect(run.result.verdict).not.toBe('valid');
  await page.goto(`/runs/${id}`);
  const trace = page.getByRole('figure', { name: /^CPU trace/ });
  await expect(trace).toHaveAttribute('data-cpu-lost', 'yes');
  await expect(page.getByLabel('Trace summary')).toContainText(/CPU lostCPU lost \d/);
  await expect(page.getByRole('region', { name: 'Verdict' })).toContainText('the kernel lost its CPU');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot('verdict-trace-cpu-lost.png'), fullPage: true });
});

interface RunBody {
  status: string;
  status_reason: string | null;
  result: {
    verdict: string;
    flags: { kind: string }[];
    rows: {
      verdict: string;
      ci95_low: number | null;
      extra: Record<string, number>;
      flags: { kind: string }[];
      references: { tool: string; status: string; ratio: number | null; reason: string | null }[];
    }[];
  } | null;
}

const getRun = async (request: APIRequestContext, id: number) => (await (await request.get(`/api/runs/${id}`)).json()) as RunBody;
const flagKinds = (run: RunBody) => [...(run.result?.flags ?? []), ...(run.result?.rows ?? []).flatMap((r) => r.flags)].map((f) => f.kind);
const ONE_CPU = { op: 'fp64', threads: [1], repeats: 1, duration_s: 1, warmup_s: 0 };
/** Whether a tool is installed here (the injecting runner runs on this machine, with this PATH). */
const onPath = (tool: string) => (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, tool)));

/** The run page shows the API's verdict up front, not "valid", with the reason in words; no cell reads "valid". */
async function expectFlagged(page: Page, id: number, verdict: string, reason: RegExp): Promise<void> {
  await page.goto(`/runs/${id}`);
  const region = page.getByRole('region', { name: 'Verdict' });
  await expect(region).toHaveAttribute('data-verdict', verdict);
  await expect(region.locator('.badge')).not.toHaveText('valid');
  await expect(region.getByRole('listitem').filter({ hasText: reason })).toBeVisible();
  const cells = page.getByRole('table', { name: /mean ± stddev/ }).getByRole('cell');
  await expect(cells.first()).toBeVisible();
  for (const cell of await cells.all()) {
    await expect(cell).not.toHaveAttribute('data-verdict', 'valid');
    await expect(cell.getByText('valid', { exact: true })).toHaveCount(0);
  }
}

// Not serial: a failure here does not hide the other cases (the next worker starts its own injecting runner).
test.describe('injected results, through a real runner whose kernel lines are rewritten', () => {
  let injected: InjectedRunner | undefined;

  test.beforeAll(async ({ request, baseURL }) => {
    injected = await startInjectedRunner(request, baseURL ?? 'http://127.0.0.1:8000');
  });

  test.afterAll(async ({ request }) => {
    await injected?.stop(request);
  });

  test('above the theoretical peak: the page says so, and the efficiency over 100 % is marked', async ({ page, request }) => {
    const { id } = await injected!.run(request, 'above_peak', 'cpu', ONE_CPU);
    const run = await getRun(request, id);
    expect(flagKinds(run), 'the API flags it (a CPU peak is known for this host)').toContain('above_peak');
    await expectFlagged(page, id, run.result!.verdict, /above the theoretical peak/);
    const efficiency = page.getByRole('table', { name: /mean ± stddev/ }).getByText(/% of peak$/).first();
    await expect(efficiency).toHaveClass(/badge-bad/);
    expect(Number((await efficiency.textContent())?.replace(/[^\d.]/g, ''))).toBeGreaterThan(100);
  });

  test('failed verification: the run is untrusted and the page says the check failed', async ({ page, request }) => {
    const { id, status } = await injected!.run(request, 'unverified', 'cpu', ONE_CPU);
    expect(status).toBe('untrusted');
    const run = await getRun(request, id);
    expect(flagKinds(run)).toContain('unverified');
    await expectFlagged(page, id, run.result!.verdict, /verification failed/);
    await expect(page.getByRole('note').filter({ hasText: /^untrusted:/ })).toContainText(run.status_reason ?? 'untrusted');
  });

  test('a memory latency below the physical floor: the page says no machine has it', async ({ page, request }) => {
    const { id } = await injected!.run(request, 'below_floor', 'memory', { op: 'latency', sizes: [16384], threads: [1], repeats: 1, duration_s: 1, warmup_s: 0 });
    const run = await getRun(request, id);
    expect(flagKinds(run)).toContain('below_floor');
    await expectFlagged(page, id, run.result!.verdict, /below the physical floor/);
  });

  test('a NaN from the kernel: the run fails with the reason in words, no figure, no "valid", not at 100 %', async ({ page, request }) => {
    const { id, status } = await injected!.run(request, 'non_finite', 'cpu', ONE_CPU);
    expect(status).toBe('failed');
    const run = await getRun(request, id);
    expect(run.result).toBeNull();
    expect(run.status_reason).toMatch(/NaN/);
    await page.goto(`/runs/${id}`);
    await expect(page.getByRole('note').filter({ hasText: /^failed:/ })).toContainText(run.status_reason!);
    await expect(page.getByText('This run has no results (failed).')).toBeVisible();
    await expect(page.getByText('valid', { exact: true })).toHaveCount(0);
    await expect(page.getByRole('progressbar', { name: 'Progress' })).toHaveAttribute('aria-valuetext', /^failed (after|before)/);
    await expect(page.getByRole('region', { name: 'Run details' })).not.toContainText('100 %');
  });

  test('ours far above iperf3: the ratio stands with the reason why ours can exceed it, in words', async ({ page, request }) => {
    const params = { op: 'tcp_stream', sizes: [65536], streams: [1], repeats: 1, duration_s: 1, warmup_s: 0, reference: true };
    const { id } = await injected!.run(request, 'tenfold', 'network', params);
    const iperf3 = (await getRun(request, id)).result!.rows[0]!.references.find((r) => r.tool === 'iperf3');
    expect(iperf3, 'the run has its iperf3 reference').toBeDefined();
    await page.goto(`/runs/${id}`);
    const cell = page.getByRole('table', { name: /mean ± stddev/ }).getByRole('cell').first();
    if (onPath('iperf3')) {
      expect(iperf3!.status, iperf3!.reason ?? '').toBe('ok');
      expect(iperf3!.ratio, 'our figure, ten times over, is above iperf3\'s').toBeGreaterThan(1.05);
      await expect(cell.getByText(/^\d[\d,.]*× iperf3 \(\d[\d,.]* Mbit\/s\)$/)).toBeVisible(); // its own figure in the row (issue 26)
      await expect(cell.getByText(/why ours can exceed iperf3: \S/)).toBeVisible();
    } else {
      // no iperf3 on this machine: the badge says so, with the reason, in words
      await expect(cell.getByText(`iperf3 unavailable on this host: ${iperf3!.reason}`)).toBeVisible();
    }
  });

  test('a spread too wide for a 95 % interval says so instead of a negative bound; averaged preemptions read as a count', async ({ page, request }) => {
    const { id } = await injected!.run(request, 'wide_spread', 'cpu', { ...ONE_CPU, repeats: 2 });
    const row = (await getRun(request, id)).result!.rows[0]!;
    expect(row.ci95_low).toBeNull(); // the backend gives no interval that would reach below zero
    expect(Number.isInteger(row.extra.preemptions)).toBe(false);
    await page.goto(`/runs/${id}`);
    const oneThread = page.getByRole('table', { name: /mean ± stddev/ }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: '1', exact: true }) });
    await oneThread.getByText('details').click();
    const fact = (name: string) => oneThread.getByRole('term').filter({ hasText: new RegExp(`^${name}$`) }).locator('xpath=following-sibling::dd[1]');
    await expect(fact('95 % CI')).toHaveText('— (spread too wide: a 95 % interval would reach below zero)');
    await expect(fact('Preemptions')).toHaveText(/^≈ \d[\d,]* \(mean over repeats\)$/);
    await expect(oneThread.locator('[title*="95 % CI"]')).toHaveCount(0);
  });
});

test('no run whose verdict is not valid reads "valid" on its page', async ({ page, request }) => {
  const res = await request.get('/api/runs?limit=100');
  // the list is light (issue 31): each run carries its stored verdict apart, not the whole result
  const runs = ((await res.json()) as { data: { id: number; verdict: string | null }[] }).data;
  const flagged = runs.filter((r) => r.verdict !== null && r.verdict !== 'valid');
  expect(flagged.length).toBeGreaterThanOrEqual(2); // at least the two runs above
  for (const r of flagged.slice(0, 20)) {
    await page.goto(`/runs/${r.id}`);
    const verdict = page.getByRole('region', { name: 'Verdict' });
    await expect(verdict).toHaveAttribute('data-verdict', r.verdict!);
    await expect(verdict.locator('.badge')).not.toHaveText('valid');
    await expect(verdict.locator('li').first()).toBeVisible(); // a reason in words
  }
});
