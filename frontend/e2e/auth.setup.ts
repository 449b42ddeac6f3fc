// Runs before every spec (the `setup` project): signs in as the e2e admin through the real sign-in
// page and saves the cookies, which the specs start from (playwright.config.ts: storageState).
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { expect, test as setup } from '@playwright/test';
import { ADMIN_STATE, USERS, signIn } from './auth';

setup('sign in as the e2e admin', async ({ page }) => {
  await signIn(page, USERS.admin);
  await expect(page.getByRole('link', { name: `Account: ${USERS.admin} (admin)` })).toBeVisible();
  await mkdir(dirname(ADMIN_STATE), { recursive: true });
  await page.context().storageState({ path: ADMIN_STATE });
});
