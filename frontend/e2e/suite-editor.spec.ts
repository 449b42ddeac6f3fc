// The suite editor: an operator makes a suite of two CPU items from the generated fields (short durations), sees
// each item's expected duration and the total agree with the server's, saves it, runs it on the e2e host and
// watches the suite run end; exports it and imports the file back (the same suite again), edits the copy and
// deletes it after the confirmation. A viewer may export but is offered no New, Import, Save as new, Edit or
// Delete; a copy of a built-in suite made through the editor is that suite again; a file the server refuses is
// said in words, and nothing is saved. Every suite and suite run made here is deleted or cancelled in afterEach,
// whatever happens.
import { readFile } from 'node:fs/promises';
import type { APIRequestContext, Page, PlaywrightWorkerArgs } from '@playwright/test';
import { expect, test } from './fixtures';
import { ADMIN_STATE, USERS, signIn } from './auth';
import { HOST, PEER, downloadText, firstHostId, hostBox, shot } from './helpers';

interface SuiteJson {
  id: string;
  title: string;
  description: string;
  builtin: boolean;
  created_by: string | null;
  items: { experiment: string; params: Record<string, unknown>; needs: string | null }[];
  expected_duration_one_host_s: number;
}

const made: string[] = [];
let suiteRun: number | null = null;

/** The API as the e2e admin, whoever the page is signed in as: set-up and clean-up. */
async function adminApi(playwright: PlaywrightWorkerArgs['playwright'], baseURL: string | undefined): Promise<APIRequestContext> {
  const state = JSON.parse(await readFile(ADMIN_STATE, 'utf8')) as { cookies: { name: string; value: string }[] };
  const csrf = state.cookies.find((c) => c.name === 'hb_csrf')?.value;
  return playwright.request.newContext({ baseURL, storageState: ADMIN_STATE, extraHTTPHeaders: csrf ? { 'X-CSRF-Token': csrf } : {} });
}

test.afterEach(async ({ playwright, baseURL }) => {
  const api = await adminApi(playwright, baseURL);
  if (suiteRun !== null) expect([202, 404]).toContain((await api.post(`/api/suite-runs/${suiteRun}/cancel`)).status());
  suiteRun = null;
  for (const id of made.splice(0)) expect([204, 404]).toContain((await api.delete(`/api/suites/${id}`)).status());
  await api.dispose();
});

/** "1 min 36 s", as the dashboard's formatDuration writes whole seconds. */
function duration(seconds: number): string {
  const s = Math.round(seconds);
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return m ? (rest ? `${m} min ${rest} s` : `${m} min`) : `${rest} s`;
}

/** One CPU item with short timings: one thread, one 1-second repeat, no warm-up. */
async function fillShortCpu(page: Page, n: number, ops: { check: string[]; uncheck: string[] }): Promise<void> {
  const item = page.getByRole('group', { name: new RegExp(`^Item ${n}: `) });
  await item.getByLabel('Experiment', { exact: true }).selectOption('cpu');
  await expect(item).toHaveAccessibleName('Item ' + n + ': CPU throughput');
  for (const op of ops.check) await item.getByRole('checkbox', { name: op }).check();
  for (const op of ops.uncheck) await item.getByRole('checkbox', { name: op }).uncheck();
  await item.getByLabel(/^threads/i).fill('1');
  await item.getByLabel(/^repeats/i).fill('1');
  await item.getByLabel(/^duration/i).fill('1');
  await item.getByLabel(/^warm-?up/i).fill('0');
  await expect(item).toContainText('Expected duration of this item: ≈ 1 s on each host');
}

test.describe('as an operator', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('makes a suite of two items, runs it, exports it, imports it back, edits and deletes the copy', async ({ page }) => {
    await signIn(page, USERS.operator, undefined, '/suites');
    await page.getByRole('button', { name: 'New suite', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'New suite', level: 1 })).toBeVisible();
    await expect(page).toHaveURL(/\/suites\?new/);
    const title = `E2E suite ${Date.now()}`;
    await page.getByLabel('Title').fill(title);
    await page.getByLabel('Description').fill('Two short CPU measurements, FP64 then INT32, made by the suite editor spec.');

    await fillShortCpu(page, 1, { check: ['FP64 FLOPS'], uncheck: [] });
    await page.getByLabel('Experiment of a new item').selectOption('cpu');
    await page.getByRole('button', { name: 'Add item' }).click();
    await fillShortCpu(page, 2, { check: ['Integer ops (INT32)'], uncheck: ['FP64 FLOPS'] });
    const total = page.getByText(/^Expected duration of the suite on one host:/);
    await expect(total).toContainText('≈ 2 s');
    // From the top, so that the sticky header is drawn where it belongs in the full-page picture.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: shot('suite-editor.png'), fullPage: true });

    const saving = page.waitForResponse((r) => r.url().endsWith('/api/suites') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Save suite' }).click();
    const res = await saving;
    expect(res.status(), await res.text()).toBe(201);
    const saved = (await res.json()) as SuiteJson;
    made.push(saved.id);
    expect(saved.created_by).toBe(USERS.operator);
    expect(saved.items.map((i) => i.params)).toEqual([
      { threads: [1], repeats: 1, duration_s: 1, warmup_s: 0 },
      { op: 'int32', threads: [1], repeats: 1, duration_s: 1, warmup_s: 0 },
    ]);
    // The editor's total is the server's figure.
    expect(`≈ ${duration(saved.expected_duration_one_host_s)}`).toBe('≈ 2 s');

    await expect(page).toHaveURL(/\/suites$/);
    await expect(page.getByText(`Saved “${title}” (${saved.id}).`)).toBeVisible();
    const card = page.getByRole('article', { name: title });
    await expect(card).toContainText(`saved by ${USERS.operator}`);
    await expect(card.getByRole('listitem')).toHaveCount(2);
    await expect(card).toContainText('Cap on one host: ≈ 2 s');

    // Run it on the e2e host alone, and watch the suite run to its end.
    await firstHostId(page.request);
    if (await hostBox(page, PEER).isChecked()) await hostBox(page, PEER).uncheck();
    await hostBox(page, HOST).check();
    const starting = page.waitForResponse((r) => r.url().endsWith('/api/suite-runs') && r.request().method() === 'POST');
    await card.getByRole('button', { name: 'Run suite' }).click();
    const started = await starting;
    expect(started.status(), await started.text()).toBe(201);
    const sr = (await started.json()) as { id: number; runs_total: number };
    suiteRun = sr.id;
    expect(sr.runs_total).toBe(2);
    await expect(page.getByRole('heading', { name: `${title} · suite run #${sr.id}`, level: 1 })).toBeVisible();
    await expect(page.getByRole('table', { name: `Runs of suite run #${sr.id}` }).locator('tbody tr')).toHaveCount(2);
    const summary = page.getByRole('region', { name: 'Suite run' });
    await expect(summary.getByText('succeeded', { exact: true })).toBeVisible({ timeout: 180_000 });
    await expect(summary).toContainText('2 of 2 runs done');
    suiteRun = null;

    // Export: the file is GET /api/suites/{id}.
    await page.getByRole('link', { name: 'All suites' }).click();
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: `Export ${title}` }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe(`hostbench-suite-${saved.id}.json`);
    const text = await downloadText(download);
    const exported = JSON.parse(text) as SuiteJson;
    expect(exported).toEqual((await (await page.request.get(`/api/suites/${saved.id}`)).json()) as SuiteJson);

    // Import the same file back: a new saved suite, the same in every item.
    const importing = page.waitForResponse((r) => r.url().endsWith('/api/suites') && r.request().method() === 'POST');
    await page.getByLabel('Import a suite (JSON file)').setInputFiles({ name: download.suggestedFilename(), mimeType: 'application/json', buffer: Buffer.from(text) });
    const imported = (await (await importing).json()) as SuiteJson;
    made.push(imported.id);
    expect(imported.id).not.toBe(saved.id);
    expect({ ...imported, id: saved.id }).toEqual(exported);
    await expect(page.getByText(`Imported “${title}” (${imported.id}).`)).toBeVisible();
    await expect(page.getByRole('article', { name: title })).toHaveCount(2);

    // Edit the copy (the later card), then delete it after the confirmation.
    await page.getByRole('button', { name: `Edit ${title}` }).last().click();
    await expect(page.getByRole('heading', { name: 'Edit suite', level: 1 })).toBeVisible();
    await expect(page.getByLabel('Title')).toHaveValue(title);
    await expect(page.getByRole('group', { name: /^Item \d: / })).toHaveCount(2);
    await page.getByLabel('Title').fill(`${title} (edited)`);
    await page.getByRole('button', { name: 'Remove item 2' }).click();
    const putting = page.waitForResponse((r) => r.url().endsWith(`/api/suites/${imported.id}`) && r.request().method() === 'PUT');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect((await putting).status()).toBe(200);
    const edited = page.getByRole('article', { name: `${title} (edited)` });
    await expect(edited.getByRole('listitem')).toHaveCount(1);

    await edited.getByRole('button', { name: `Delete ${title} (edited)` }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${title} (edited)?` });
    await expect(dialog).toContainText('Its suite runs so far stay');
    await dialog.getByRole('button', { name: 'Delete the suite' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(edited).toHaveCount(0);
    expect((await page.request.get(`/api/suites/${imported.id}`)).status()).toBe(404);
  });
});

test.describe('as a viewer', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('may export a saved suite, but is offered no New, Import, Save as new, Edit or Delete', async ({ page, playwright, baseURL }) => {
    const api = await adminApi(playwright, baseURL);
    const title = `E2E viewer suite ${Date.now()}`;
    const res = await api.post('/api/suites', { data: { title, items: [{ experiment: 'cpu', params: { threads: [1], repeats: 1, duration_s: 1 } }] } });
    expect(res.status(), await res.text()).toBe(201);
    made.push(((await res.json()) as SuiteJson).id);
    await api.dispose();

    await signIn(page, USERS.viewer, undefined, '/suites');
    const card = page.getByRole('article', { name: title });
    await expect(card).toContainText(`saved by ${USERS.admin}`);
    await expect(card.getByRole('button', { name: `Export ${title}` })).toBeVisible();
    await expect(page.getByRole('button', { name: 'New suite', exact: true })).toHaveCount(0);
    await expect(page.getByLabel('Import a suite (JSON file)')).toHaveCount(0);
    await expect(page.getByRole('button', { name: /^Save .* as a new suite$/ })).toHaveCount(0);
    await expect(page.getByRole('button', { name: /^(Edit|Delete) / })).toHaveCount(0);
    // The editor's address leads to the role's refusal, not a form.
    await page.goto('/suites?new');
    await expect(page.getByRole('alert')).toContainText('Your role (viewer) cannot save suites.');
    await expect(page.getByRole('form', { name: 'Suite editor' })).toHaveCount(0);
  });
});

test('Save as new suite: the Quick health check copied through the editor is the same suite, as estimated', async ({ page, request }) => {
  const quick = (await (await request.get('/api/suites/quick')).json()) as SuiteJson;
  await page.goto('/suites');
  await page.getByRole('button', { name: 'Save Quick health check as a new suite' }).click();
  await expect(page.getByRole('heading', { name: 'New suite', level: 1 })).toBeVisible();
  await expect(page.getByLabel('Title')).toHaveValue('Quick health check (copy)');
  await expect(page.getByRole('group', { name: /^Item \d: / })).toHaveCount(quick.items.length);
  await expect(page.getByText(/^Expected duration of the suite on one host:/)).toContainText(`≈ ${duration(quick.expected_duration_one_host_s)}`);

  const saving = page.waitForResponse((r) => r.url().endsWith('/api/suites') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Save suite' }).click();
  const res = await saving;
  expect(res.status(), await res.text()).toBe(201);
  const copy = (await res.json()) as SuiteJson;
  made.push(copy.id);
  expect(copy.items).toEqual(quick.items);
  expect(copy.expected_duration_one_host_s).toBe(quick.expected_duration_one_host_s);
  await expect(page.getByRole('article', { name: 'Quick health check (copy)' })).toContainText(`saved by ${USERS.admin}`);
});

test('a file the server refuses is said in words, and nothing is saved', async ({ page, request }) => {
  const before = ((await (await request.get('/api/suites')).json()) as { data: SuiteJson[] }).data.length;
  await page.goto('/suites');
  const input = page.getByLabel('Import a suite (JSON file)');
  const alert = page.getByRole('alert').filter({ hasText: 'Not imported' });

  await input.setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('title: not json') });
  await expect(alert).toContainText('Not imported: notes.json: The file is not JSON');

  const bad = { title: 'Too many threads', items: [{ experiment: 'cpu', params: { threads: [0], repeats: 1 } }] };
  const refused = page.waitForResponse((r) => r.url().endsWith('/api/suites') && r.request().method() === 'POST');
  await input.setInputFiles({ name: 'bad-suite.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(bad)) });
  expect((await refused).status()).toBe(422);
  await expect(alert).toContainText('Not imported: bad-suite.json was refused: item 1: threads: Input should be greater than or equal to 1');
  expect(((await (await request.get('/api/suites')).json()) as { data: SuiteJson[] }).data).toHaveLength(before);
});
