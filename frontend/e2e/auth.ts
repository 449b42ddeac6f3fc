// Who the e2e suite signs in as. `./hostbench test --only e2e` creates three users with one random
// password (HOSTBENCH_E2E_PASSWORD): e2e-admin, e2e-operator and e2e-viewer (HOSTBENCH_E2E_ADMIN,
// _OPERATOR and _VIEWER name them). The setup project signs in as the admin through the real sign-in page and saves the
// browser state every other spec starts from (ADMIN_STATE).
import { join } from 'node:path';
import { expect, type BrowserContext, type Page } from '@playwright/test';

const state = process.env.HOSTBENCH_TEST_STATE;
export const ADMIN_STATE = join(state ? join(state, 'playwright-auth') : 'playwright/.auth', 'admin.json');

export const USERS = {
  admin: process.env.HOSTBENCH_E2E_ADMIN || 'e2e-admin',
  operator: process.env.HOSTBENCH_E2E_OPERATOR || 'e2e-operator',
  viewer: process.env.HOSTBENCH_E2E_VIEWER || 'e2e-viewer',
} as const;

export function password(): string {
  const pw = process.env.HOSTBENCH_E2E_PASSWORD;
  if (!pw) throw new Error('HOSTBENCH_E2E_PASSWORD is not set: run the browser suite through `./hostbench test --only e2e`, which creates the e2e users');
  return pw;
}

/** Signs in through the sign-in page, as a person would, and waits for the dashboard. */
export async function signIn(page: Page, name: string, pw: string = password(), from = '/'): Promise<void> {
  await page.goto(from);
  await expect(page.getByRole('heading', { name: 'Sign in', level: 1 })).toBeVisible();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Password').fill(pw);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

/** The CSRF token the server set at sign-in (readable cookie `hb_csrf`): scripts in the browser
 * context echo it in `X-CSRF-Token` on every POST/PUT/PATCH/DELETE, as the dashboard does. */
export async function csrfOf(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === 'hb_csrf');
  if (!cookie) throw new Error('no hb_csrf cookie: not signed in');
  return cookie.value;
}
