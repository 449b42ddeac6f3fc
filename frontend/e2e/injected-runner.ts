// A third runner for the specs that need results no healthy machine gives: a real runner process (the
// runner package, registered with a token from the real API, long-polling for work), whose kernel binary is
// injecting-kernel.py in front of the real hbk. That script rewrites the kernel's lines for the case this
// file writes before each job (above the peak, failed verification, NaN, below the physical floor, a wide
// spread, ours far above a reference tool's figure). The runner's protocol checks, the API, PostgreSQL, Redis, Celery and the verdicts are all real.
// Its host is deleted afterwards with its runs kept, so the other specs see the two hosts they expect and
// the verdict sweep over every run still sees these.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type APIRequestContext } from '@playwright/test';
import { waitForRun } from './helpers';

export type InjectedCase = 'pass' | 'above_peak' | 'tenfold' | 'unverified' | 'non_finite' | 'below_floor' | 'wide_spread';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PYTHON = process.env.HOSTBENCH_E2E_PYTHON || join(ROOT, '.venv', 'bin', 'python');

export interface InjectedRunner {
  name: string;
  hostId: number;
  /** Starts one job on the injecting host with its kernel's output rewritten as `which` says; waits for
   * the run to finish and returns its id and status. */
  run(request: APIRequestContext, which: InjectedCase, experiment: string, params: Record<string, unknown>): Promise<{ id: number; status: string }>;
  /** Stops the runner and deletes its host, keeping its runs. */
  stop(request: APIRequestContext): Promise<void>;
}

export async function startInjectedRunner(request: APIRequestContext, baseURL: string): Promise<InjectedRunner> {
  // a name of its own each time: a worker that replaces a failed one starts another injecting runner
  const name = `e2e-injected-${process.pid}-${Date.now() % 100_000}`;
  const dir = mkdtempSync(join(process.env.HOSTBENCH_TEST_STATE ?? tmpdir(), 'injected-runner-'));
  const caseFile = join(dir, 'case');
  writeFileSync(caseFile, 'pass\n');
  const kernel = join(dir, 'hbk');
  writeFileSync(
    kernel,
    `#!/bin/sh\nHB_E2E_REAL_KERNEL='${join(ROOT, 'runner', 'kernels', 'build', 'hbk')}' HB_E2E_CASE_FILE='${caseFile}' ` +
      `exec '${PYTHON}' '${fileURLToPath(new URL('./injecting-kernel.py', import.meta.url))}' "$@"\n`,
  );
  chmodSync(kernel, 0o755);

  const res = await request.post('/api/hosts/registration-tokens', { data: { ttl_s: 600 } });
  expect(res.status(), await res.text()).toBe(201);
  const { token } = (await res.json()) as { token: string };
  const log = openSync(join(dir, 'runner.log'), 'a');
  const child: ChildProcess = spawn(PYTHON, ['-m', 'hostbench_runner'], {
    cwd: join(ROOT, 'runner'),
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      LANG: 'C.UTF-8',
      HOSTBENCH_SERVER: baseURL,
      HOSTBENCH_RUNNER_STATE: join(dir, 'state'),
      HOSTBENCH_RUNNER_NAME: name,
      HOSTBENCH_REGISTRATION_TOKEN: token,
      HOSTBENCH_KERNEL_BIN: kernel,
      HOSTBENCH_FMA_PROBE: '0', // as every runner the suites start
    },
    stdio: ['ignore', log, log],
  });

  let hostId = 0;
  try {
    await expect
      .poll(
        async () => {
          if (child.exitCode !== null) throw new Error(`the injecting runner exited with ${child.exitCode} (its log: ${join(dir, 'runner.log')})`);
          const hosts = ((await (await request.get('/api/hosts')).json()) as { data: { id: number; name: string; online: boolean }[] }).data;
          hostId = hosts.find((h) => h.online && h.name === name)?.id ?? 0;
          return hostId;
        },
        { timeout: 60_000, message: `${name} registers and comes online` },
      )
      .toBeGreaterThan(0);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }

  return {
    name,
    hostId,
    async run(api, which, experiment, params) {
      // one job at a time: the case is read by the kernel when its run starts
      writeFileSync(caseFile, `${which}\n`);
      const created = await api.post('/api/jobs', { data: { host_ids: [hostId], experiment, params } });
      expect(created.status(), await created.text()).toBe(201);
      const id = ((await created.json()) as { runs: { id: number }[] }).runs[0]?.id as number;
      const status = await waitForRun(api, id, 90_000);
      writeFileSync(caseFile, 'pass\n');
      return { id, status };
    },
    async stop(api) {
      const gone = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      child.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      const del = await api.delete(`/api/hosts/${hostId}?history=keep`);
      expect(del.status(), await del.text()).toBe(204);
    },
  };
}
