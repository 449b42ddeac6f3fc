// Issue 13's small things, in the browser: a run waiting on a busy host shows its queue position;
// cancel asks first and a cancelled run does not read "100 %"; History exports what it lists; the
// Hosts card shows the disks and NICs the runner reports; every reference tool says its figure or why
// there is none, in words.
import { expect, test } from './fixtures';
import { downloadText, HOST, openHostCard, pickOps, startRun, waitForRun } from './helpers';

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
  const card = await openHostCard(page, HOST);
  const facts = card.locator('dt', { hasText: /^Disks$/ }).locator('xpath=following-sibling::dd[1]');
  await expect(facts).not.toContainText('not reported yet');
  await expect(facts).toContainText(/GiB/);
  await expect(card.locator('dt', { hasText: /^NICs$/ }).locator('xpath=following-sibling::dd[1]')).not.toContainText('not reported yet');
});

test('the memory form asks for a block size only where the op uses one', async ({ page }) => {
  await page.goto('/jobs/new');
  await page.getByLabel('Experiment').selectOption('memory');
  await pickOps(page, 'stream_triad');
  await expect(page.getByLabel('Block sizes')).toHaveCount(0);
  await pickOps(page, 'copy');
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

interface Reference { tool: string; status: string; ratio: number | null; reason: string | null }
const TOOL_LABEL: Record<string, string> = { hpcc: 'HPCC' };

// Every ticked reference says its figure or, in words, why none: INT32 has no reference tool (the runner's
// sentence says so in the row); the round trip gets sockperf's figure and ping's as context, or the words for a
// tool this machine lacks. An FP64 run's HPL (minutes of HPCC) is reference-phase.spec.ts's.
// Ours well above iperf3, and the words on why: verdicts.spec.ts (an injected figure against the real iperf3).
test('reference tools: a figure or, in words, why none; sockperf before ICMP ping, named as context', async ({ page, request }) => {
  const params = { sizes: [64], streams: [1], repeats: 1, duration_s: 1, warmup_s: 0, reference: true };
  const cpu = await startRun(request, 'cpu', { op: 'int32', threads: [1], repeats: 1, duration_s: 1, warmup_s: 0, reference: true });
  const rr = await startRun(request, 'network', { ...params, op: 'tcp_rr' });
  const seen: string[] = [];
  for (const id of [cpu, rr]) {
    expect(['succeeded', 'untrusted']).toContain(await waitForRun(request, id, 150_000));
    const row = ((await (await request.get(`/api/runs/${id}`)).json()) as { result: { rows: { references: Reference[] }[] } }).result.rows[0]!;
    const refs = row.references;
    expect(refs.length, 'the run asked for its reference tools').toBeGreaterThan(0);
    seen.push(...refs.map((r) => `#${id} ${r.tool} ${r.status}${r.ratio ? ` ${r.ratio.toFixed(2)}×` : ''}`));
    await page.goto(`/runs/${id}`);
    const cell = page.getByRole('table', { name: /mean ± stddev/ }).getByRole('cell').first();
    const badges = cell.locator('.badges');
    await expect(badges).toBeVisible();
    for (const r of refs) {
      const name = TOOL_LABEL[r.tool] ?? r.tool;
      if (r.status === 'ok') {
        const badge = badges.getByText(new RegExp(`^\\d[\\d,.]*× ${name}`));
        await expect(badge).toBeVisible();
        if (r.tool === 'ping') await expect(badge).toContainText('(ICMP, context only)');
        // ours above the reference: the reason sits beside the ratio, in words
        const why = cell.getByText(`why ours can exceed ${name}`);
        if (r.tool === 'iperf3' && (r.ratio ?? 0) > 1.05) await expect(why).toBeVisible();
        else await expect(why).toHaveCount(0);
      } else {
        // not a bare "n/a" with the reason in a tooltip: the words are on the page
        const words = r.status === 'failed' ? `${name} failed` : `${name} unavailable on this host`;
        // "none": the runner's own sentence ("no reference tool measures int32: ..."), capitalised
        const shown = r.status === 'none' && r.reason ? r.reason.charAt(0).toUpperCase() + r.reason.slice(1) : r.reason ? `${words}: ${r.reason}` : words;
        await expect(badges.getByText(shown)).toBeVisible();
      }
    }
    await expect(badges.getByText(/^n\/a$/)).toHaveCount(0);
    if (id === rr) {
      // like-for-like first: sockperf's TCP round trip, then ping (ICMP, answered by the kernel) as context
      expect(refs.map((r) => r.tool)).toEqual(expect.arrayContaining(['sockperf']));
      const text = await badges.innerText();
      if (refs.some((r) => r.tool === 'ping')) expect(text.indexOf('ping')).toBeGreaterThan(text.indexOf('sockperf'));
    }
  }
  console.log(`reference tools: ${seen.join('; ')}`);
});

test('the form warns, before the run, when its threads exceed the host\'s CPUs: the run still happens', async ({ page, request }) => {
  const hosts = (await (await request.get('/api/hosts')).json()) as { data: { name: string; inventory: { cpu?: { threads?: number } } }[] };
  const cpus = hosts.data.find((h) => h.name === HOST)?.inventory.cpu?.threads;
  expect(cpus, `${HOST}'s inventory names its CPUs`).toBeGreaterThan(0);
  await page.goto('/jobs/new');
  await page.getByLabel('Experiment').selectOption('cpu');
  await page.getByRole('checkbox', { name: new RegExp(`^${HOST}\\b`) }).check();
  const note = page.getByRole('note', { name: 'Oversubscribed' });
  await page.getByLabel(/^threads/i).fill(String(cpus));
  await expect(note).toHaveCount(0);
  await page.getByLabel(/^threads/i).fill(`1, ${2 * (cpus as number)}`);
  await expect(note).toContainText(`${2 * (cpus as number)} threads`);
  await expect(note).toContainText(`on ${HOST} (${cpus} CPU`); // every count above the host's CPUs, named
  await expect(note).toContainText('The runs still happen');
  await expect(page.getByRole('button', { name: 'Start run' })).toBeEnabled();
});
