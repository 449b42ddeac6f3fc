// The one HTTP client. Types come from schema.d.ts, generated from openapi.json (`npm run gen:api`);
// never retype an API shape by hand — derive it in types.ts.
import createClient from 'openapi-fetch';
import type { paths } from './schema';
import { apiOrigin } from '../../config/env';

export const api = createClient<paths>({
  baseUrl: apiOrigin(),
  // Late-bound so tests (and polyfills) that replace globalThis.fetch after import are honoured.
  fetch: (request: Request) => globalThis.fetch(request),
});
