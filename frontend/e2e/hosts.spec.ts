// Instance labels edited in place on the hosts page, kept by the server, and usable as a filter.
import { expect, test } from './fixtures';
import { USERS } from './auth';
import { HOST, PEER, openHostCard, shot, startRun, waitForRun } from './helpers';

test('instance labels and a peak are edited inline; labels filter History', async ({ page, request }) => {
  const before = await startRun(request, 'cpu', { op: 'fp64', threads: [1], repeats: 1, duration_s: 0.5, warmup_s: 0 });
  await waitForRun(request, before);
  await page.goto('/');
  // Two hosts: the runs below go to e2e-host; e2e-peer serves two-host network jobs. One row each; a name opens the card.
  await expect(page.getByRole('button', { name: /^Open / })).toHaveCount(2);
  await expect(page.getByRole('button', { name: `Open ${PEER}`, exact: true })).toBeVisible();
  await expect(page.getByRole('article')).toHaveCount(0);
  const card = await openHostCard(page, HOST);
  const name = (await card.getByRole('heading', { level: 2 }).textContent())?.trim() ?? '';

  await card.getByRole('button', { name: `Edit labels of ${name}` }).click();
  const form = card.getByRole('form', { name: `Instance labels of ${name}` });
  await expect(form.getByLabel('Provider')).toBeFocused();
  await form.getByLabel('Provider').fill('e2e-cloud');
  await form.getByLabel('Instance type').fill('tiny.e2e');
  await form.getByLabel('Region').fill('lab-1');
  await form.getByRole('button', { name: 'Save labels' }).click();

  const labels = card.getByRole('region', { name: `Instance labels of ${name}` });
  await expect(labels).toContainText('e2e-cloud');
  await expect(labels).toContainText('tiny.e2e');
  await expect(labels).toContainText('lab-1');
  await page.reload();
  await expect(card.getByRole('region', { name: `Instance labels of ${name}` })).toContainText('tiny.e2e');

  // A peak the host cannot discover, entered from a datasheet.
  // The backend lists the memory peak as unknown (with the reason) when the firmware hides the DIMMs.
  await card.getByRole('button', { name: `Enter Memory bandwidth peak of ${name}` }).click();
  await card.getByLabel('Memory bandwidth peak (MB/s)').fill('102400');
  await card.getByLabel('Source (optional)').fill('e2e datasheet');
  await card.getByRole('button', { name: 'Save peak' }).click();
  await expect(card.getByRole('region', { name: 'Theoretical peaks' })).toContainText(`Memory bandwidth 102,400 MB/s = entered by ${USERS.admin}: e2e datasheet (user)`);

  await card.getByText('Caches and platform').click();
  await expect(card.getByText('Caches', { exact: true })).toBeVisible();
  await page.evaluate(() => window.scrollTo(0, 0)); // the header is sticky: a full-page shot from the top
  await page.screenshot({ path: shot('hosts.png'), fullPage: true });

  // Escape leaves the form without saving.
  await card.getByRole('button', { name: `Edit labels of ${name}` }).click();
  await form.getByLabel('Region').fill('nowhere');
  await form.getByLabel('Region').press('Escape');
  await expect(card.getByRole('region', { name: `Instance labels of ${name}` })).toContainText('lab-1');

  // A run keeps the labels it was handed out under (a later edit does not rewrite the past): one made
  // now carries tiny.e2e, the one made before the edit does not.
  const labelled = await startRun(request, 'cpu', { op: 'fp64', threads: [1], repeats: 1, duration_s: 0.5, warmup_s: 0 });
  await waitForRun(request, labelled);
  await page.goto('/history?instance_type=no-such-type');
  await expect(page.getByLabel('Instance type')).toHaveValue('no-such-type');
  await expect(page.getByText('No run matches these filters.')).toBeVisible();
  await page.getByLabel('Instance type').fill('tiny.e2e');
  await page.getByLabel('Instance type').press('Enter');
  await expect(page).toHaveURL(/instance_type=tiny\.e2e/);
  await expect(page.getByText('No run matches these filters.')).toHaveCount(0);
  await expect(page.getByRole('link', { name: `#${labelled}`, exact: true })).toBeVisible();
  await expect(page.getByRole('link', { name: `#${before}`, exact: true })).toHaveCount(0);
});
