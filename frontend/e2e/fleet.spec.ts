// The fleet, from the dashboard: an admin clicks Add host, copies the command, and pastes it on a second
// host — here a network namespace joined to the server over a veth pair (./hostbench test creates it and
// names it in HOSTBENCH_FLEET_NETNS; the server's public URL is its veth address). Everything the new
// runner needs comes from the server. It registers, shows up with its own address, serves a two-host
// TCP job that e2e-host drives, and is revoked: its runner process exits. Then it is deleted.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOST, fillTiming, hostBox, openHostCard, openNewJob, shot } from './helpers';
import { expect, test } from './fixtures';

const NETNS = process.env.HOSTBENCH_FLEET_NETNS;
const NAME = 'e2e-fleet';
// The host's own tools only: no virtualenv or Node of the test run on PATH.
const BARE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const card = (page: import('@playwright/test').Page, name: string) =>
  page.getByRole('article').filter({ has: page.getByRole('heading', { name, exact: true }) });

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

// Whatever happens, the other specs find the two hosts they expect: a fleet host left over is deleted.
test.afterEach(async ({ request }) => {
  const res = await request.get('/api/hosts');
  const hosts = ((await res.json()) as { data: { id: number; name: string }[] }).data;
  for (const h of hosts.filter((x) => x.name === NAME)) await request.delete(`/api/hosts/${h.id}?history=delete`);
});

test('Add host → paste the command on a second host → it registers, serves a two-host job, and is revoked', async ({ page }) => {
  test.skip(!NETNS, 'needs the network namespace ./hostbench test creates as root (HOSTBENCH_FLEET_NETNS)');
  const dir = mkdtempSync(join(process.env.HOSTBENCH_TEST_STATE ?? tmpdir(), 'fleet-runner-'));

  await page.goto('/');
  await page.getByRole('button', { name: 'Add host', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a host' });
  const command = ((await dialog.getByTestId('install-command').textContent()) ?? '').trim();
  expect(command).toContain(process.env.HOSTBENCH_RUNNER_SERVER ?? 'hbreg_');
  await dialog.getByRole('button', { name: 'Done' }).click();

  // Pasted on the host as given; the options a person would add there: a name, a directory, and (no
  // systemd in a namespace) --start instead of a service.
  const t0 = Date.now();
  const out = execFileSync('ip', ['netns', 'exec', NETNS!, 'sh', '-c', `${command} --name ${NAME} --dir ${dir} --no-service --start`], {
    // HOSTBENCH_FMA_PROBE=0: as every runner the suites start (runner/tests/test_fma_probe_cache.py runs the probe)
    env: { PATH: BARE_PATH, HOME: dir, LANG: 'C.UTF-8', HOSTBENCH_FMA_PROBE: '0' },
    encoding: 'utf8',
    timeout: 240_000,
  });
  const seconds = (Date.now() - t0) / 1000;
  writeFileSync(join(dir, 'install-output.txt'), `${out}\ntotal ${seconds.toFixed(1)} s (measured by fleet.spec)\n`);
  console.log(`install command in ${NETNS}: ${seconds.toFixed(1)} s\n${out}`);
  expect(out).toMatch(/register with http/);
  const pid = Number(readFileSync(join(dir, 'runner.pid'), 'utf8').trim());
  expect(alive(pid)).toBe(true);

  // The Hosts page: the new host, online, at its own address (the namespace's), beside e2e-host's.
  const fleet = card(page, NAME);
  await expect(async () => {
    await page.goto('/');
    await page.getByRole('button', { name: `Open ${NAME}`, exact: true }).click({ timeout: 2_000 });
    await expect(fleet).toContainText('online', { timeout: 2_000 });
  }).toPass({ timeout: 60_000 });
  const inner = process.env.HOSTBENCH_FLEET_ADDRESS!;
  await expect(fleet).toContainText(inner);
  await expect(await openHostCard(page, HOST)).not.toContainText(inner);

  // A two-host TCP job from the form: the new host serves, e2e-host drives and connects to its address.
  await openNewJob(page, 'network_pair', [NAME, HOST]);
  await expect(page.getByRole('note', { name: 'Host roles' })).toContainText(`${NAME} serves (listens on a port it chooses); ${HOST} drives`);
  await page.getByLabel('Message sizes', { exact: true }).fill('64 KiB');
  await page.getByLabel('Streams', { exact: true }).fill('1');
  await fillTiming(page, { repeats: 2, duration: 1, warmup: 0 });
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`network_drive on ${HOST}`);
  const jobRuns = page.getByRole('table', { name: /^Runs of job #\d+$/ });
  await expect(jobRuns.getByRole('row').filter({ hasText: 'serves' })).toContainText(NAME);
  await expect(jobRuns.getByRole('row').filter({ hasText: 'serves' })).toContainText('succeeded', { timeout: 150_000 });
  await expect(jobRuns.getByRole('row').filter({ hasText: 'drives' })).toContainText('succeeded');
  await expect(page.getByRole('table', { name: /^TCP throughput: .*\(Mbit\/s\)$/ }).getByRole('cell').first()).toContainText(/\d[\d,.]* ± \d[\d,.]* Mbit\/s/, { timeout: 150_000 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot('fleet-pair-run.png'), fullPage: true });

  // Revoke: the runner's next call gets 401 and its process ends.
  await page.goto('/');
  await (await openHostCard(page, NAME)).getByRole('button', { name: `Revoke ${NAME}` }).click();
  await page.getByRole('dialog', { name: `Revoke ${NAME}?` }).getByRole('button', { name: 'Revoke runner' }).click();
  await expect(card(page, NAME)).toContainText('revoked');
  await page.getByRole('heading', { name: NAME, exact: true }).scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, -80));
  await page.screenshot({ path: shot('host-revoked.png'), fullPage: false });
  await expect.poll(() => alive(pid), { timeout: 60_000, message: 'the revoked runner exits' }).toBe(false);
  const log = existsSync(join(dir, 'runner.log')) ? readFileSync(join(dir, 'runner.log'), 'utf8') : '';
  expect(log).toMatch(/401|revoked|refused/i);

  // Deleted with its history: gone from the list, so the other specs see the two hosts they expect.
  await card(page, NAME).getByRole('button', { name: `Delete ${NAME}` }).click();
  const del = page.getByRole('dialog', { name: `Delete ${NAME}?` });
  await del.getByLabel(/^Delete history/).check();
  await del.getByRole('button', { name: 'Delete host and history' }).click();
  await expect(card(page, NAME)).toHaveCount(0);
  await expect(hostBox(page, NAME)).toHaveCount(0);
});
