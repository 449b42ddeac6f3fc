// Schedules: create one on the e2e host with a short recurrence (cron "* * * * *": the shortest a schedule can be,
// due within a minute) from the form, with the server's preview of its next three times; see beat fire it and its
// history show started (a link to the suite run) or skipped (the host busy with another spec's run); turn it off.
// A viewer reads the page and is offered no Create button. The schedule, its suite runs and the tiny saved suite it
// runs are removed in afterEach whatever happens, so nothing of it stays queued on the shared e2e host.
import { expect, test } from './fixtures';
import { HOST, PEER, TINY_CPU, firstHostId, hostBox, shot } from './helpers';
import { USERS, signIn } from './auth';

let scheduleId: number | null = null;
let suiteId: string | null = null;

test.afterEach(async ({ request }) => {
  if (scheduleId !== null) {
    const h = (await (await request.get(`/api/schedules/${scheduleId}/history?limit=100`)).json()) as { data: { suite_run_id: number | null }[] };
    for (const f of h.data ?? []) if (f.suite_run_id !== null) await request.post(`/api/suite-runs/${f.suite_run_id}/cancel`);
    expect([204, 404]).toContain((await request.delete(`/api/schedules/${scheduleId}`)).status());
    scheduleId = null;
  }
  if (suiteId !== null) {
    expect([204, 404]).toContain((await request.delete(`/api/suites/${suiteId}`)).status());
    suiteId = null;
  }
});

test('create a schedule on the e2e host, see it fire and its history say what happened', async ({ page, request }) => {
  test.setTimeout(240_000);
  await firstHostId(request); // the e2e host is online
  const saved = await request.post('/api/suites', {
    data: { title: 'e2e tiny scheduled suite', items: [{ experiment: 'cpu', params: { ...TINY_CPU, repeats: 1 } }] },
  });
  expect(saved.status(), await saved.text()).toBe(201);
  suiteId = ((await saved.json()) as { id: string }).id;

  await page.goto('/schedules');
  await expect(page.getByRole('heading', { name: 'Schedules', level: 1 })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' })).toHaveAttribute('aria-current', 'page');
  await page.getByRole('button', { name: 'Create schedule' }).click();
  const form = page.getByRole('form', { name: 'New schedule' });
  await form.getByLabel('Title').fill('e2e every minute');
  await form.getByLabel('Suite').selectOption({ label: `e2e tiny scheduled suite (${suiteId})` });
  if (await hostBox(page, PEER).isChecked()) await hostBox(page, PEER).uncheck();
  await hostBox(page, HOST).check();
  // the interval preview first (the default, every 1 hour), then cron
  await expect(form.getByRole('list', { name: 'Next fire times' }).getByRole('listitem')).toHaveCount(3);
  await expect(form).toContainText('Next, every hour:');
  await form.getByLabel('Cron expression (UTC)').check();
  await form.getByLabel('Cron expression', { exact: true }).fill('61 * * * *');
  await expect(form.getByRole('alert')).toContainText('outside 0-59');
  await form.getByLabel('Cron expression', { exact: true }).fill('* * * * *');
  await expect(form).toContainText('Next, every minute:');
  await expect(form.getByRole('list', { name: 'Next fire times' }).getByRole('listitem')).toHaveCount(3);

  const created = page.waitForResponse((r) => r.url().endsWith('/api/schedules') && r.request().method() === 'POST');
  await form.getByRole('button', { name: 'Create schedule' }).click();
  const res = await created;
  expect(res.status(), await res.text()).toBe(201);
  scheduleId = ((await res.json()) as { id: number }).id;
  await expect(page.getByRole('status').filter({ hasText: 'Created “e2e every minute”' })).toBeVisible();

  // (the history opens in a row of its own below, whose text does not carry the title)
  const row = page.getByRole('table', { name: 'Schedules' }).locator('tbody > tr').filter({ hasText: 'e2e every minute' });
  await expect(row).toContainText('every minute');
  await expect(row).toContainText(HOST);
  await expect(row).toContainText('e2e tiny scheduled suite');
  await row.getByRole('button', { name: 'History' }).click();
  const history = page.getByRole('table', { name: 'History of e2e every minute' });
  // beat looks every 5 s; "* * * * *" is due at the next minute
  const fired = history.locator('tbody tr').first();
  await expect(fired).toContainText(/started|skipped/, { timeout: 120_000 });
  await expect(fired).toContainText('schedule');
  if ((await fired.textContent())?.includes('started')) {
    await expect(fired.getByRole('link')).toHaveAttribute('href', /^\/suite-runs\/\d+$/);
  } else {
    await expect(fired).toContainText('busy');
  }
  await expect(row).toContainText(/started|skipped/); // the latest firing in the list too
  await page.screenshot({ path: shot('schedules.png'), fullPage: true });

  // turned off: no next time
  const toggle = row.getByRole('checkbox', { name: 'e2e every minute enabled' });
  const put = page.waitForResponse((r) => r.url().endsWith(`/api/schedules/${scheduleId}`) && r.request().method() === 'PUT');
  await toggle.click(); // the box follows the server's answer, not the click
  expect((await put).status()).toBe(200);
  await expect(toggle).not.toBeChecked();
});

test.describe('as a viewer', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('reads the schedules but is offered no Create button', async ({ page }) => {
    await signIn(page, USERS.viewer, undefined, '/schedules');
    await expect(page.getByRole('heading', { name: 'Schedules', level: 1 })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Create schedule' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Run now' })).toHaveCount(0);
  });
});
