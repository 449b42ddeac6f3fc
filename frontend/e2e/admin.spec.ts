// What only an admin does: Add host (a single-use registration token and the command to paste on the
// target host, which a fleet test can run: it is saved to $HOSTBENCH_TEST_STATE/install-command.txt),
// and users (add one with a one-time sign-in link, which signs the newcomer in and asks for a password).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { USERS } from './auth';
import { shot } from './helpers';
import { expect, test } from './fixtures';

test('Add host: a single-use token, its expiry, the install command to copy, and the container alternative', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('button', { name: 'Add host', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a host' });
  await expect(dialog).toBeVisible();
  // Long enough for a fleet test that runs after this suite to use it.
  await dialog.getByLabel('Token valid for').selectOption({ label: '1 hour' });
  const install = dialog.getByTestId('install-command');
  await expect(install).toContainText('hbreg_');
  await expect(dialog.getByRole('note')).toContainText(/registers one host and expires at .*\(in (1 h|59 min)\)/);
  await expect(dialog.getByTestId('container-command')).toContainText('hbreg_');
  await expect(dialog.getByRole('button', { name: 'Copy install command' })).toBeVisible();
  const command = ((await install.textContent()) ?? '').trim();
  // Where runners send their calls: the runners' own API process on the host people reach (./hostbench test
  // says which: HOSTBENCH_RUNNER_SERVER), never the dashboard's port.
  expect(command).toContain(`--server ${process.env.HOSTBENCH_RUNNER_SERVER ?? new URL(page.url()).origin}`);
  await page.screenshot({ path: shot('add-host.png'), fullPage: false });
  if (process.env.HOSTBENCH_TEST_STATE) await writeFile(join(process.env.HOSTBENCH_TEST_STATE, 'install-command.txt'), `${command}\n`);

  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect(dialog).toHaveCount(0);
});

test('Users: the list, and a newcomer added with a one-time sign-in link who then sets a password', async ({ page, browser }) => {
  await page.goto('/users');
  await expect(page.getByRole('heading', { name: 'Users', level: 1 })).toBeVisible();
  await expect(page.getByRole('rowheader', { name: `${USERS.admin} (you)` })).toBeVisible();
  await expect(page.getByRole('rowheader', { name: USERS.operator })).toBeVisible();
  await expect(page.getByRole('rowheader', { name: USERS.viewer })).toBeVisible();

  const name = `e2e-new-${Date.now().toString(36)}`;
  await page.getByRole('button', { name: 'Add user' }).click();
  const form = page.getByRole('form', { name: 'Add user' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Role').selectOption('operator');
  await form.getByRole('button', { name: 'Add user' }).click();
  await expect(page.getByRole('heading', { name: `Added ${name} (operator)` })).toBeVisible();
  const link = ((await page.getByTestId('sign-in-link').textContent()) ?? '').trim();
  expect(link).toMatch(/\/signin\/link#hblink_/);
  await expect(page.getByRole('rowheader', { name })).toBeVisible();
  await page.screenshot({ path: shot('users.png'), fullPage: true });

  // The newcomer opens the link in their own browser: signed in, asked for a password, then in.
  const theirs = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const them = await theirs.newPage();
  await them.goto(link);
  await expect(them.getByRole('heading', { name: `Signed in as ${name} (operator)` })).toBeVisible();
  await expect(them).toHaveURL(/\/signin\/link$/); // the token is gone from the address bar
  await them.getByLabel('New password', { exact: true }).fill('newcomer password 1');
  await them.getByLabel('Repeat the new password').fill('newcomer password 1');
  await them.getByRole('button', { name: 'Set password and continue' }).click();
  await expect(them.getByRole('heading', { name: 'Hosts', level: 1 })).toBeVisible();
  await expect(them.getByRole('link', { name: `Account: ${name} (operator)` })).toBeVisible();
  // Used once: the same link does not sign anyone in again.
  const again = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const other = await again.newPage();
  await other.goto(link);
  await expect(other.getByRole('alert')).toContainText('This sign-in link cannot be used');
  await again.close();
  await theirs.close();

  // The admin sees the password set, then deletes the account.
  await page.reload();
  const row = page.getByRole('rowheader', { name }).locator('xpath=..');
  await expect(row).not.toContainText('no password yet');
  await row.getByRole('button', { name: `Delete ${name}` }).click();
  await page.getByRole('dialog', { name: `Delete ${name}?` }).getByRole('button', { name: `Delete ${name}` }).click();
  await expect(page.getByRole('rowheader', { name })).toHaveCount(0);
});

test('Audit: who did what, visible to every role', async ({ page }) => {
  await page.goto('/audit');
  await expect(page.getByRole('heading', { name: 'Audit log', level: 1 })).toBeVisible();
  // The Add-host test above issued a registration token as the admin.
  await expect(page.getByRole('table')).toContainText('host.registration_token');
  await expect(page.getByRole('table')).toContainText(USERS.admin);
});
