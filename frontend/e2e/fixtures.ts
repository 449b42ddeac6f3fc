// `test` for every spec: as Playwright's, except that the `request` fixture (the API from Node)
// carries the signed-in admin's cookies and the CSRF header the server demands on every
// state-changing call with a session cookie, as the dashboard sends it.
import { readFile } from 'node:fs/promises';
import { test as base } from '@playwright/test';

export { expect } from '@playwright/test';

interface StoredState {
  cookies?: { name: string; value: string }[];
}

export const test = base.extend({
  request: async ({ playwright, baseURL, storageState }, provide) => {
    const state: StoredState | undefined =
      typeof storageState === 'string' ? (JSON.parse(await readFile(storageState, 'utf8')) as StoredState) : (storageState as StoredState | undefined);
    const csrf = state?.cookies?.find((c) => c.name === 'hb_csrf')?.value;
    const request = await playwright.request.newContext({
      baseURL,
      storageState,
      extraHTTPHeaders: csrf ? { 'X-CSRF-Token': csrf } : {},
    });
    await provide(request);
    await request.dispose();
  },
});
