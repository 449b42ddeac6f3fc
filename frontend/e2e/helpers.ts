// Shared steps for the e2e specs: tiny real jobs started through the API (every kind is also started
// from the form: cpu-job, trace, matrix and job-kinds specs), the new-job form, live samples, and
// waiting for runs to finish. The stack has two runners: e2e-host (registered first) and e2e-peer.
import { expect, type APIRequestContext, type Download, type Page } from '@playwright/test';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The host every one-host job runs on, and the second host of two-host jobs. */
export const HOST = 'e2e-host';
export const PEER = 'e2e-peer';

export const shot = (name: string) => fileURLToPath(new URL(`../../docs/screenshots/${name}`, import.meta.url));

/** Two 1-second repeats: 2 s of work, and a stddev to draw as whiskers. */
export const TINY_CPU = { op: 'fp64', threads: [1], repeats: 2, duration_s: 1, warmup_s: 0 };

export async function firstHostId(request: APIRequestContext): Promise<number> {
  let id = 0;
  await expect
    .poll(async () => {
      const res = await request.get('/api/hosts');
      const body = (await res.json()) as { data: { id: number; name: string; online: boolean }[] };
      id = body.data.find((h) => h.online && h.name === HOST)?.id ?? 0;
      return id;
    }, { timeout: 60_000, message: 'an online host' })
    .toBeGreaterThan(0);
  return id;
}

/** The Hosts page's table, then the card of the host named `name` (its row's name opens it). */
export async function openHostCard(page: Page, name: string) {
  await page.getByRole('button', { name: `Open ${name}`, exact: true }).click();
  const card = page.getByRole('article').filter({ has: page.getByRole('heading', { name, level: 2, exact: true }) });
  await expect(card).toBeVisible();
  return card;
}

/** The new-job form with this experiment and these hosts ticked, in this order (for network_pair the
 * first serves and the second drives). */
export async function openNewJob(page: Page, experiment: string, hosts: string[] = [HOST]): Promise<void> {
  await page.goto('/jobs/new');
  await expect(page.getByRole('heading', { name: 'New job', level: 1 })).toBeVisible();
  await page.getByLabel('Experiment').selectOption(experiment);
  for (const name of hosts) await hostBox(page, name).check();
}

/** Ticks exactly these operations (the kernel's keys) in the form's Operations checkboxes (one run per op ticked). */
export async function pickOps(page: Page, ...ops: string[]): Promise<void> {
  const group = page.getByRole('group', { name: 'Operations', exact: true });
  for (const box of await group.getByRole('checkbox').all()) {
    if (ops.includes((await box.getAttribute('value')) ?? '')) await box.check();
    else await box.uncheck();
  }
}

export const hostBox = (page: Page, name: string) => page.getByRole('checkbox', { name: new RegExp(`^${name}\\b`) });

/** Fills the repeat / duration / warm-up fields the experiments share. */
export async function fillTiming(page: Page, t: { repeats?: number; duration: number; warmup?: number }): Promise<void> {
  if (t.repeats !== undefined) await page.getByLabel(/^repeats/i).fill(String(t.repeats));
  await page.getByLabel(/^duration/i).fill(String(t.duration));
  if (t.warmup !== undefined) await page.getByLabel(/^warm-?up/i).fill(String(t.warmup));
}

/** Init script, measurement only: every sample event's arrival in this browser minus its measurement
 * time `t` (the kernel's clock; the browser runs on the same host, so the clocks agree). */
export const recordArrivals = () => {
  const w = window as unknown as { __hbArrivals: number[]; EventSource: typeof EventSource };
  w.__hbArrivals = [];
  const Native = w.EventSource;
  w.EventSource = class extends Native {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      this.addEventListener('sample', (e) => {
        w.__hbArrivals.push(Date.now() / 1000 - JSON.parse((e as MessageEvent).data).t);
      });
    }
  };
};

export const arrivals = (page: Page) => page.evaluate(() => (window as unknown as { __hbArrivals: number[] }).__hbArrivals);

/** The run page's live chart receives samples while the run runs: at least one drawn point, and
 * (with recordArrivals installed) at least one sample that reached the browser within a few seconds
 * of being measured, i.e. pushed live rather than loaded afterwards. */
export async function expectLiveSamples(page: Page, timeout = 150_000): Promise<void> {
  const chart = page.getByRole('figure', { name: /live throughput/i });
  await expect(chart).toBeVisible();
  await expect
    .poll(async () => Number(await chart.getAttribute('data-points')), { timeout, message: 'live points on the chart' })
    .toBeGreaterThanOrEqual(1);
  await expect.poll(async () => Math.min(...(await arrivals(page))), { message: 'a sample pushed live' }).toBeLessThan(5);
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
