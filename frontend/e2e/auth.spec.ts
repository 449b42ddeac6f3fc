// Signing in and out, and what a role may do, against the real server: the sign-in page, a wrong
// password in words, the way back to where the person was, a viewer who sees no New-job button and
// whose API call gets 403 from the server, and sign-out. Each test starts signed out (not as the
// admin the other specs use) and signs in on its own session, so signing out ends only that one.
import { HOST, openHostCard, shot } from './helpers';
import { USERS, csrfOf, password, signIn } from './auth';
import { expect, test } from './fixtures';

test.use({ storageState: { cookies: [], origins: [] } });

test('the sign-in page: a wrong password is said in words; the right one goes back where the person was', async ({ page }) => {
  await page.goto('/history?experiment=cpu');
  await expect(page.getByRole('heading', { name: 'Sign in', level: 1 })).toBeVisible();
  await expect(page).toHaveURL(/\/signin\?next=%2Fhistory%3Fexperiment%3Dcpu$/);
  await expect(page.getByRole('navigation', { name: 'Main' })).toHaveCount(0);
  await expect(page.getByLabel('Name')).toBeFocused();
  await page.screenshot({ path: shot('signin.png'), fullPage: true });

  await page.getByLabel('Name').fill(USERS.viewer);
  await page.getByLabel('Password').fill(`${password()}-wrong`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong name or password.');
  await expect(page.getByLabel('Password')).toHaveValue('');
  await page.screenshot({ path: shot('signin-wrong-password.png'), fullPage: true });

  await page.getByLabel('Password').fill(password());
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'History', level: 1 })).toBeVisible();
  await expect(page).toHaveURL(/\/history\?experiment=cpu$/);
  await expect(page.getByLabel('Experiment')).toHaveValue('cpu');
  await expect(page.getByRole('link', { name: `Account: ${USERS.viewer} (viewer)` })).toBeVisible();
});

test('a viewer sees no New job, label or peak editing, and the API answers 403 when tried anyway', async ({ page }) => {
  await signIn(page, USERS.viewer);
  await openHostCard(page, HOST); // a viewer opens a host's card from the hosts table
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'History' })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Audit' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'New job' })).toHaveCount(0);
  await expect(page.getByRole('link', { name: /^New job on / })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^Edit labels of / })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Add host', exact: true })).toHaveCount(0);
  await expect(nav.getByRole('link', { name: 'Users' })).toHaveCount(0);

  // Typed in by hand, the page says why instead of offering a form.
  await page.goto('/jobs/new');
  await expect(page.getByRole('alert')).toContainText('Your role (viewer) cannot create jobs.');

  // The server is the authority: the viewer's own session, with the CSRF header, is refused.
  const hosts = (await (await page.request.get('/api/hosts')).json()) as { data: { id: number; name: string }[] };
  const hostId = hosts.data.find((h) => h.name === HOST)?.id;
  expect(hostId).toBeTruthy();
  const csrf = await csrfOf(page.context());
  const job = { host_ids: [hostId], experiment: 'cpu', params: { op: 'fp64', threads: [1], repeats: 1, duration_s: 0.5, warmup_s: 0 } };
  const refused = await page.request.post('/api/jobs', { data: job, headers: { 'X-CSRF-Token': csrf } });
  expect(refused.status()).toBe(403);
  expect(((await refused.json()) as { detail: string }).detail).toMatch(/operator/);
  const users = await page.request.get('/api/users');
  expect(users.status()).toBe(403);
  // Without the header, a state-changing call with the session cookie is refused before any role check.
  const noCsrf = await page.request.post('/api/jobs', { data: job });
  expect(noCsrf.status()).toBe(403);
  expect(((await noCsrf.json()) as { detail: string }).detail).toMatch(/CSRF/i);
});

test('sign-out ends the session and returns to the sign-in page', async ({ page }) => {
  await signIn(page, USERS.operator, password(), '/history');
  await expect(page.getByRole('heading', { name: 'History', level: 1 })).toBeVisible();
  await expect(page.getByRole('link', { name: 'New job' })).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in', level: 1 })).toBeVisible();
  await expect(page).toHaveURL(/\/signin$/);
  expect((await page.request.get('/api/auth/me')).status()).toBe(401);
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Sign in', level: 1 })).toBeVisible();
});
