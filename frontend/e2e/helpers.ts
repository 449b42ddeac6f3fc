// Shared steps for the e2e specs: tiny real jobs started through the API (the UI path is covered
// by cpu-job.spec.ts and trace.spec.ts), and waiting for their runs to finish.
import { expect, type APIRequestContext, type Download } from '@playwright/test';
import { readFile } from 'node:fs/promises';

/** Two 1-second repeats: 2 s of work, and a stddev to draw as whiskers. */
export const TINY_CPU = { op: 'fp64', threads: [1], repeats: 2, duration_s: 1, warmup_s: 0 };

export async function firstHostId(request: APIRequestContext): Promise<number> {
  let id = 0;
  await expect
    .poll(async () => {
      const res = await request.get('/api/hosts');
      const body = (await res.json()) as { data: { id: number; online: boolean }[] };
      id = body.data.find((h) => h.online)?.id ?? 0;
      return id;
    }, { timeout: 60_000, message: 'an online host' })
    .toBeGreaterThan(0);
  return id;
}

/** POST /api/jobs for one host; returns the run id. */
export async function startRun(request: APIRequestContext, experiment: string, params: Record<string, unknown>): Promise<number> {
  const hostId = await firstHostId(request);
  const res = await request.post('/api/jobs', { data: { host_ids: [hostId], experiment, params } });
  expect(res.status(), await res.text()).toBe(201);
  const job = (await res.json()) as { runs: { id: number }[] };
  return job.runs[0]?.id as number;
}

export async function waitForRun(request: APIRequestContext, id: number, timeout = 90_000): Promise<string> {
  let status = '';
  await expect
    .poll(async () => {
      const res = await request.get(`/api/runs/${id}`);
      status = ((await res.json()) as { status: string }).status;
      return ['succeeded', 'failed', 'untrusted', 'cancelled'].includes(status);
    }, { timeout, intervals: [250, 500, 1000], message: `run #${id} to finish` })
    .toBe(true);
  return status;
}

export async function downloadText(download: Download): Promise<string> {
  const path = await download.path();
  return readFile(path, 'utf8');
}

export async function downloadBytes(download: Download): Promise<Buffer> {
  return readFile(await download.path());
}
