// Loading, empty and error states: every page says what is going on, never a blank area. Addresses
// that name nothing are asked of the real backend; an API that fails or is slow is played by the
// browser (page.route), since a healthy stack cannot be made to fail on cue.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { HOST, shot } from './helpers';

const MISSING = 999_999;

/** Every matching API call answers 503 with the backend's error shape, until the returned function is called. */
async function apiDown(page: Page, pattern: RegExp): Promise<() => Promise<void>> {
  const handler = (route: import('@playwright/test').Route) =>
    route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ detail: 'e2e: the API is down' }) });
  await page.route(pattern, handler);
  return () => page.unroute(pattern, handler);
}

test('a run id that does not exist: a clear message and a way on', async ({ page }) => {
  await page.goto(`/runs/${MISSING}`);
  await expect(page.getByRole('heading', { name: `Run #${MISSING}`, level: 1 })).toBeVisible();
  await expect(page.getByRole('alert')).toContainText(`Run not found: run ${MISSING} not found`);
  await expect(page.getByRole('link', { name: 'All runs' })).toHaveAttribute('href', '/history');
  await page.screenshot({ path: shot('run-not-found.png'), fullPage: true });

  await page.goto('/runs/abc');
  await expect(page.getByRole('alert')).toContainText('Bad address: "abc" is not a run id');
});

test('compare: an unknown run id is marked not found; no run at all says so', async ({ page }) => {
  await page.goto(`/compare?runs=${MISSING}`);
  await expect(page.getByRole('heading', { name: 'Compare', level: 1 })).toBeVisible();
  await expect(page.getByRole('radio', { name: new RegExp(`#${MISSING} not found`) })).toBeVisible();
  await expect(page.getByText('No run with this id exists: each is marked “not found” above.')).toBeVisible();

  await page.goto('/compare');
  await expect(page.getByText(/Pick two or more runs to compare/)).toBeVisible();
});

test('an unknown page says so', async ({ page }) => {
  await page.goto('/no-such-page');
  await expect(page.getByRole('heading', { name: 'Page not found', level: 1 })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Back to hosts' })).toBeVisible();
});

test('hosts: a slow API shows loading, a failing one an error with retry, and retry recovers', async ({ page }) => {
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(/\/api\/hosts(\?|$)/, async (route) => {
    await held;
    await route.continue();
  });
  await page.goto('/');
  await expect(page.getByRole('status').filter({ hasText: 'Loading hosts…' })).toBeVisible();
  release();
  await expect(page.getByRole('button', { name: `Open ${HOST}`, exact: true })).toBeVisible();
  await page.unrouteAll({ behavior: 'wait' });

  const restore = await apiDown(page, /\/api\/hosts(\?|$)/);
  await page.reload();
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('Could not load hosts: e2e: the API is down');
  await page.screenshot({ path: shot('hosts-error.png'), fullPage: true });
  await restore();
  await alert.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByRole('button', { name: `Open ${HOST}`, exact: true })).toBeVisible();
});

test('every other page shows the API error in words', async ({ page }) => {
  const pages: [string, RegExp, string][] = [
    ['/history', /\/api\/runs\?/, 'Could not load runs: e2e: the API is down'],
    ['/jobs/new', /\/api\/experiments$/, 'Could not load experiments: e2e: the API is down'],
    ['/runs/1', /\/api\/runs\/1$/, 'Could not load the run: e2e: the API is down'],
    ['/compare?runs=1,2', /\/api\/runs\?/, 'Could not load the runs: e2e: the API is down'],
  ];
  for (const [path, pattern, message] of pages) {
    const restore = await apiDown(page, pattern);
    // The run page also listens on the event stream; keep it from delivering the run instead.
    if (path.startsWith('/runs/')) await page.route(/\/api\/runs\/1\/events/, (r) => r.abort());
    await page.goto(path);
    await expect(page.getByRole('alert').filter({ hasText: message })).toBeVisible();
    await expect(page.getByRole('alert').filter({ hasText: message }).getByRole('button', { name: 'Try again' })).toBeVisible();
    await restore();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  }
});
