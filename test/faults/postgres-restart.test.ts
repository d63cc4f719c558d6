import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Knex } from '../../src/db/knex.ts';
import { createLogger } from '../../src/logger.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/runtime/embedded-postgres.ts';
import { startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { eventually } from '../helpers/approval-flow.ts';
import {
  createDriver,
  expectOneNotificationPerApprover,
  expectReferencesGapFree,
  expectSignedDownload,
  expectWebhooksOncePerEvent,
  waitAllApproved,
  type LifecycleDriver,
} from '../helpers/lifecycle-driver.ts';
import { makePdf } from '../helpers/pdf.ts';
import { createTestPki, type TestPki } from '../helpers/pki.ts';
import { alive, postmasterPid, startRole, wathiqEnv, type RunningProcess } from '../helpers/processes.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * Issue 12, item 7: PostgreSQL of its own for this test, stopped with a real fast shutdown (SIGINT to the
 * postmaster: every connection is terminated with 57P01) and started again on the same port and data folder while
 * the API and the worker run. Meanwhile the API answers 503 `unavailable` (not 500, not a hang); afterwards the same
 * processes, never restarted, serve again and every document in flight ends approved, with no duplicate
 * notification and no webhook event under two delivery ids. A create refused during the outage left nothing.
 */

const logger = createLogger({ logLevel: 'silent' });
let dir: string;
let pgDir: string;
let pgPort: number;
let postgres: EmbeddedPostgresHandle;
let db: Knex;
let graph: FakeGraphApi;
let receiver: WebhookReceiver;
let pki: TestPki;
let api: RunningProcess;
let worker: RunningProcess;
let driver: LifecycleDriver;
let base: string;
const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-postgres-restart-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
  pgDir = path.join(dir, 'pg', 'data');
  pgPort = await freePort();
  [postgres, graph, receiver, pki] = await Promise.all([
    startEmbeddedPostgres({ dir: pgDir, port: pgPort, logger, database: 'wathiq' }),
    startFakeGraphApi(),
    startWebhookReceiver(),
    createTestPki(path.join(dir, 'pki')),
  ]);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    ...wathiqEnv({
      databaseUrl: postgres.url('wathiq'),
      temporalAddress: inject('temporalAddress'),
      taskQueue: `faults-pg-${randomBytes(4).toString('hex')}`,
      dataDir: path.join(dir, 'data'),
      whatsapp: { ...graph, appSecret },
      signing: pki,
    }),
    PORT: String(port),
    PUBLIC_BASE_URL: base,
  };
  api = await startRole('api', env); // the API role migrates the fresh database
  worker = await startRole('worker', env);
  db = createDb(postgres.url('wathiq'), { poolMax: 2 });
  driver = await createDriver({ apis: [base], db, graph, appSecret });
  await driver.registerWebhook(receiver);
});

afterAll(async () => {
  await driver?.stop({ abandon: true });
  await Promise.all([api?.kill('SIGTERM'), worker?.kill('SIGTERM')]);
  await db?.destroy();
  await postgres?.stop();
  await Promise.all([graph?.close(), receiver?.close()]);
  await rm(dir, { recursive: true, force: true });
});

interface Envelope {
  success: boolean;
  error?: { code: number; message: string; details: Record<string, string[]> };
}

/** A request that must be answered: a hang fails the test instead of waiting for ever. */
async function answered(res: Promise<Response>): Promise<{ status: number; body: Envelope }> {
  const r = await res;
  return { status: r.status, body: (await r.json()) as Envelope };
}
const bounded = () => ({ signal: AbortSignal.timeout(30_000) });

describe('PostgreSQL restarted while the API serves', () => {
  it('answers 503 while it is down and recovers without a restart of the API or the worker', async () => {
    const docs = [
      await driver.createAndSend('sequential', ['approve_only', 'sign', 'review_only']),
      await driver.createAndSend('parallel', ['sign', 'approve_only']),
    ];
    driver.startPlaying();
    await eventually(async () => (await db('approvers').where({ status: 'completed' })).length >= 1, 60_000);

    // A real fast shutdown: SIGINT to the postmaster, which terminates every connection and exits.
    const pid = await postmasterPid(pgDir);
    process.kill(pid, 'SIGINT');
    await eventually(() => !alive(pid), 60_000);

    const health = await answered(fetch(`${base}/api/v1/health`, bounded()));
    expect(health.status).toBe(503);
    expect(health.body.error).toMatchObject({ code: 503, details: { postgres: ['down'] } });
    const list = await answered(driver.request('/documents', bounded()));
    expect(list.status, JSON.stringify(list.body)).toBe(503);
    expect(list.body).toEqual({
      success: false,
      error: { code: 503, message: expect.any(String) as string, details: {} },
    });
    const status = await answered(driver.request(`/documents/${docs[0]!.id}/status`, bounded()));
    expect(status.status, JSON.stringify(status.body)).toBe(503);
    // A create during the outage is refused and leaves no row behind (checked once the database is back).
    const form = new FormData();
    form.append('title', 'Created during the outage');
    form.append('approvers[0][name]', 'Nobody');
    form.append('approvers[0][phone]', '966501111111');
    form.append('file', new Blob([await makePdf(1, 'Outage')], { type: 'application/pdf' }), 'outage.pdf');
    const created = await answered(
      driver.request('/documents', { method: 'POST', body: form, ...bounded() }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(503);
    postgres = await startEmbeddedPostgres({ dir: pgDir, port: pgPort, logger });
    // The same API process answers again: its pool dropped the dead connections and opened new ones.
    await eventually(async () => (await fetch(`${base}/api/v1/health`)).status === 200, 60_000);
    expect((await driver.request(`/documents/${docs[0]!.id}/status`)).status).toBe(200);

    await waitAllApproved(db, driver.documents, 180_000, driver);
    await driver.stop();
    expect(api.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    expect(driver.failures).toEqual([]);
    expect(await db('documents').where({ title_en: 'Created during the outage' })).toEqual([]);
    expectOneNotificationPerApprover(graph, driver.documents);
    await expectWebhooksOncePerEvent(receiver, driver.documents, 60_000);
    await expectReferencesGapFree(db, driver.accountId);
    await expectSignedDownload(driver, docs[0]!, dir, pki.nssDir);
  }, 420_000);
});
