// Hosts tested together, from the dashboard: an operator picks e2e-host and e2e-peer, all pairs both ways, tiny
// timing; the mesh runs its two rounds (each host serves once and drives once, never both at once) and the matrix
// shows both links with their Mbit/s, round trips and verdicts, the slowest named.
import { HOST, PEER, shot } from './helpers';
import { expect, test } from './fixtures';

test('Hosts together: all pairs both ways → the matrix as a heat map, the slowest link named', async ({ page }) => {
  await page.goto('/meshes');
  await expect(page.getByRole('heading', { name: 'Hosts together', level: 1 })).toBeVisible();
  const form = page.getByRole('form', { name: 'Test hosts together' });
  await form.getByRole('checkbox', { name: new RegExp(`^${HOST}`) }).check();
  await form.getByRole('checkbox', { name: new RegExp(`^${PEER}`) }).check();
  await form.getByRole('radio', { name: 'All pairs, both ways' }).check();
  await expect(form).toContainText('2 links in 2 rounds');
  await form.getByLabel('Repeats').fill('2');
  await form.getByLabel('Duration per repeat (s)').fill('0.5');
  await form.getByLabel('Warm-up (s)').fill('0');
  await form.getByRole('button', { name: 'Test together' }).click();
  await expect(page).toHaveURL(/\/meshes\/\d+$/);
  const matrix = page.getByRole('table', { name: 'Links: rows drive, columns serve' });
  await expect(matrix.getByRole('columnheader')).toHaveText(['drives ↓ · serves →', HOST, PEER]);
  await expect(page.getByText(/^done: 2 of 2 links measured in 2 rounds/)).toBeVisible({ timeout: 240_000 });
  for (const cell of await matrix.locator('td.mesh-cell:not(.mesh-self)').all()) {
    await expect(cell).toContainText(/\d[\d,.]* Mbit\/s/);
    await expect(cell).toContainText(/\d[\d,.]* µs/);
    await expect(cell).toContainText(/NO BASELINE|DISTURBED/); // one machine: the validity verdict says so
  }
  await expect(matrix.locator('td.mesh-slowest')).toHaveCount(1);
  await expect(page.getByText(/^Slowest link:/)).toContainText(/Mbit\/s/);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot('mesh-matrix.png'), fullPage: true });
});
