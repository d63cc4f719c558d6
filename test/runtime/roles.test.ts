import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../setup/free-port.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/** `npm run start:api` and `npm run start:worker`: each role starts on configured infrastructure and stops cleanly. */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

async function runRole(role: 'api' | 'worker', env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', role], {
    env: { ...process.env, LOG_LEVEL: 'warn', DATA_DIR: inject('dataDir'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (!out.includes('Wathiq is running') && child.exitCode === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, exited, output: () => out };
}

describe('separate roles for deployment', () => {
  it('the worker and the API run as two processes and stop on SIGTERM', async () => {
    const port = await freePort();
    const env = {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `roles-${port}`,
      PORT: String(port),
    };
    const worker = await runRole('worker', env);
    expect(worker.output()).toMatch(new RegExp(`worker +task queue "roles-${port}"`));
    const api = await runRole('api', env);
    // HOST is unset: outside production the API listens on loopback only.
    expect(api.output()).toContain(`http://127.0.0.1:${port}/api/v1`);

    const health = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
    expect(health.status).toBe(200);
    // PostgreSQL names each role's connections, so an operator can tell them apart (pg_stat_activity, logs' %a):
    // the API's answered the health check; the worker's, when it holds one yet, are its own.
    const names = await database.db.raw<{ rows: { application_name: string }[] }>(
      `SELECT DISTINCT application_name FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE 'wathiq-%'`,
    );
    const named = names.rows.map((r) => r.application_name);
    expect(named).toContain('wathiq-api');
    expect(named.filter((n) => n !== 'wathiq-api' && n !== 'wathiq-worker')).toEqual([]);

    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
  }, 120_000);

  it('an API held by a request that never ends exits 1 at SHUTDOWN_TIMEOUT_SECONDS, naming the step', async () => {
    const port = await freePort();
    const api = await runRole('api', {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      PORT: String(port),
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_SECONDS: '5',
    });
    expect(api.output()).toContain('Wathiq is running');
    // An upload whose body never comes: the server's close waits for it (Node's own request time-out is 5 min).
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'POST /api/v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\nContent-Length: 1000000\r\n\r\n%PDF-',
    );
    await new Promise((r) => setTimeout(r, 300));
    const signalled = Date.now();
    api.child.kill('SIGTERM');
    expect(await api.exited).toBe(1);
    const took = Date.now() - signalled;
    socket.destroy();
    expect(took).toBeGreaterThanOrEqual(5_000);
    expect(took).toBeLessThan(20_000);
    const abandoned = api
      .output()
      .split('\n')
      .filter((l) => l.includes('abandoned'))
      .map((l) => JSON.parse(l) as { step: string });
    expect(abandoned.map((l) => l.step)).toEqual(['api']);
    // The steps after the hung one still ran: the process logged its end.
    expect(api.output()).toMatch(/"outcome":"timed out".*"msg":"stopped"/);
  }, 60_000);

  it('a role without DATABASE_URL and TEMPORAL_ADDRESS refuses to start, naming them', async () => {
    const { exited, output } = await runRole('worker', { DATABASE_URL: '', TEMPORAL_ADDRESS: '' });
    expect(await exited).toBe(1);
    expect(output()).toMatch(/DATABASE_URL and TEMPORAL_ADDRESS/);
  });
});
