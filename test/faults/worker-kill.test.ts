import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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
import { createTestPki, type TestPki } from '../helpers/pki.ts';
import { startRole, wathiqEnv, type RunningProcess } from '../helpers/processes.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { startTestTsa, type TestTsa } from '../helpers/tsa-server.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * Issue 12, item 7: the worker process is killed with SIGKILL while it finalizes (it is waiting on the
 * time-stamp authority, which holds the request: the signed PDF is being made at that moment), then a new worker
 * process starts. The finalization runs again on it: every document ends approved with a valid signature, nobody is
 * notified twice, and no webhook event arrives under two delivery ids.
 */

/** A time-stamp authority in front of the test TSA that holds every request while `holding` is on. */
async function startGatedTsa(upstream: TestTsa) {
  const held: http.ServerResponse[] = [];
  let holding = true;
  let received = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received += 1;
      if (holding) return void held.push(res);
      void fetch(upstream.url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query' },
        body: Buffer.concat(chunks),
      }).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`,
    received: () => received,
    release() {
      holding = false;
      for (const res of held.splice(0)) res.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let database: TestDatabase;
let graph: FakeGraphApi;
let receiver: WebhookReceiver;
let pki: TestPki;
let tsa: TestTsa;
let gate: Awaited<ReturnType<typeof startGatedTsa>>;
let dir: string;
let env: Record<string, string>;
let api: RunningProcess;
let worker: RunningProcess;
let driver: LifecycleDriver;
const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-worker-kill-'));
  [database, graph, receiver, pki] = await Promise.all([
    createTestDatabase(),
    startFakeGraphApi(),
    startWebhookReceiver(),
    createTestPki(path.join(dir, 'pki')),
  ]);
  tsa = await startTestTsa(pki.tsa);
  gate = await startGatedTsa(tsa);
  const port = await freePort();
  env = {
    ...wathiqEnv({
      databaseUrl: database.url,
      temporalAddress: inject('temporalAddress'),
      taskQueue: `faults-kill-${randomBytes(4).toString('hex')}`,
      dataDir: path.join(dir, 'data'),
      whatsapp: { ...graph, appSecret },
      signing: pki,
      tsaUrl: gate.url,
    }),
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  };
  [worker, api] = await Promise.all([startRole('worker', env, { name: 'worker 1' }), startRole('api', env)]);
  driver = await createDriver({ apis: [`http://127.0.0.1:${port}`], db: database.db, graph, appSecret });
  await driver.registerWebhook(receiver);
});

afterAll(async () => {
  await driver?.stop({ abandon: true });
  await Promise.all([api?.kill('SIGTERM'), worker?.kill('SIGTERM')]);
  await Promise.all([graph?.close(), receiver?.close(), gate?.close(), tsa?.close()]);
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('the worker killed with SIGKILL during finalization', () => {
  it('restarts, finalizes every document once, and keeps every guarantee', async () => {
    await driver.createAndSend('parallel', ['sign', 'approve_only']);
    await driver.createAndSend('sequential', ['approve_only', 'sign']);
    await driver.createAndSend('parallel', ['review_only', 'sign']);
    driver.startPlaying();

    // Finalization is under way once the worker asks the TSA for a time-stamp (it is held, so it stays under way).
    await eventually(() => gate.received() >= 1, 120_000);
    expect(await worker.kill('SIGKILL')).toBe('SIGKILL');
    const during = await database
      .db('documents')
      .whereIn(
        'id',
        driver.documents.map((d) => d.id),
      )
      .pluck('status');
    expect(during).not.toContain('approved');
    gate.release();

    worker = await startRole('worker', env, { name: 'worker 2' });
    // The killed attempt is given up after the finalization's heartbeat time-out (30 s), then retried here.
    await waitAllApproved(database.db, driver.documents, 180_000, driver);
    await driver.stop();

    expect(driver.failures).toEqual([]);
    expectOneNotificationPerApprover(graph, driver.documents);
    await expectWebhooksOncePerEvent(receiver, driver.documents, 60_000);
    await expectReferencesGapFree(database.db, driver.accountId);
    for (const doc of driver.documents) await expectSignedDownload(driver, doc, dir, pki.nssDir);
    // Each finalization asked for a time-stamp; the one killed asked again on the new worker.
    expect(gate.received()).toBeGreaterThan(driver.documents.length);
  }, 420_000);
});
