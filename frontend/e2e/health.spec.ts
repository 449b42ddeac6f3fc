// A health check from the dashboard: an operator picks e2e-host and e2e-peer on the Health page (not by label)
// and runs a one-item suite; declared bands make the verdicts known in advance: any working CPU passes the CPU kind's
// band, and e2e-peer, labelled instance_type=e2e-slow and judged by that kind first, fails an impossible one. The
// check's card shows each host's verdict with its evidence; the hosts page shows each host's latest verdict.
import { HOST, PEER, firstHostId, shot } from './helpers';
import { expect, test } from './fixtures';

const FIGURE = { experiment: 'cpu', op: 'fp64', threads: 1 };
const SLOW = 'instance_type=e2e-slow';

test('Health: pick two hosts, run a check; each verdict with its evidence (PASS and FAIL, or DISTURBED), and on the hosts page', async ({ page, request }) => {
  const hostId = await firstHostId(request);
  const hosts = (await (await request.get('/api/hosts')).json()) as { data: { id: number; name: string }[] };
  const peerId = hosts.data.find((h) => h.name === PEER)?.id ?? 0;
  expect(peerId).toBeGreaterThan(0);
  const learned = (await (await request.get('/api/bands/learned', { params: { host_id: hostId, ...FIGURE } })).json()) as { kind: string };
  expect(learned.kind).toMatch(/^cpu=/);
  const bands = [
    { kind: learned.kind, ...FIGURE, lower: 0.001, unit: 'GFLOP/s', note: 'e2e: any working CPU' },
    { kind: SLOW, ...FIGURE, lower: 1e9, unit: 'GFLOP/s', note: 'e2e: no CPU does this' },
  ];
  for (const b of bands) expect((await request.put('/api/bands', { data: b })).ok()).toBeTruthy();
  expect((await request.patch(`/api/hosts/${peerId}/labels`, { data: { instance_type: 'e2e-slow' } })).ok()).toBeTruthy();
  const suite = (await (await request.post('/api/suites', {
    data: { title: 'e2e CPU check', items: [{ experiment: 'cpu', params: { op: ['fp64'], threads: [1], repeats: 2, duration_s: 0.3, warmup_s: 0, quiet_wait_s: 1, disturbed_retries: 1 } }] },
  })).json()) as { id: string };
  try {
    await page.goto('/health-checks');
    const form = page.getByRole('form', { name: 'Start a health check' });
    await form.getByLabel('Suite', { exact: true }).selectOption(suite.id);
    await form.getByRole('checkbox', { name: new RegExp(`^${HOST}`) }).check();
    await form.getByRole('checkbox', { name: new RegExp(`^${PEER}`) }).check();
    await expect(form.getByRole('status')).toHaveText('2 picked');
    await form.getByLabel('Learn bands from hosts of the same').selectOption('instance_type');
    await form.getByRole('button', { name: 'Run check' }).click();

    const card = page.getByRole('region', { name: /^Health check \d+$/ }).first();
    await expect(card).toContainText('e2e CPU check');
    await expect(card).toContainText(/judged/, { timeout: 120_000 });
    const row = (name: string) => card.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });
    // a measurement this machine disturbed is DISTURBED (rerun), never the other verdict
    await expect(row(HOST)).toContainText(/PASS|DISTURBED/);
    await expect(row(PEER)).toContainText(/FAIL|DISTURBED/);
    if ((await row(PEER).textContent())?.includes('FAIL')) await expect(row(PEER)).toContainText(`declared for ${SLOW}`);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: shot('health-check.png'), fullPage: true });

    await page.goto('/');
    const table = page.getByRole('table').first();
    await expect(table.getByRole('columnheader', { name: 'Health check' })).toBeVisible();
    await expect(table.getByRole('row').filter({ hasText: PEER })).toContainText(/(FAIL|DISTURBED).* ago/);
    await page.screenshot({ path: shot('hosts-verdicts.png'), fullPage: false });
  } finally {
    await request.patch(`/api/hosts/${peerId}/labels`, { data: { instance_type: null } });
    for (const b of bands) await request.post('/api/bands/remove', { data: { kind: b.kind, ...FIGURE } });
  }
});
