import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
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
import { freePort } from '../setup/free-port.ts';

/**
 * Issue 12, item 8: two API processes and two worker processes against one PostgreSQL and one Temporal server take
 * 100 documents through their lifecycle — created, sent, each approver acting (by WhatsApp button through Meta-signed
 * notifications, or on the approval page), approved, downloaded and signature-checked on a sample — with requests
 * spread over both APIs in turn. Every document ends approved, nobody is notified twice, each webhook event arrives
 * under one delivery id, and the reference numbers are 1..100 with no gap and no duplicate.
 */

const DOCUMENTS = 100;
const CONCURRENCY = 6;

let dir: string;
let database: TestDatabase;
let graph: FakeGraphApi;
let receiver: WebhookReceiver;
let pki: TestPki;
const roles: RunningProcess[] = [];
let driver: LifecycleDriver;
const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-scale-out-'));
  [database, graph, receiver, pki] = await Promise.all([
    createTestDatabase(),
    startFakeGraphApi(),
    startWebhookReceiver(),
    createTestPki(path.join(dir, 'pki')),
  ]);
  const shared = {
    ...wathiqEnv({
      databaseUrl: database.url,
      temporalAddress: inject('temporalAddress'),
      taskQueue: `faults-scale-${randomBytes(4).toString('hex')}`,
      dataDir: path.join(dir, 'data'),
      whatsapp: { ...graph, appSecret },
      signing: pki,
    }),
    // One rate limit per key across both APIs.
    RATE_LIMIT_STORE: 'postgres',
  };
  const ports = [await freePort(), await freePort()];
  const apiEnv = (port: number) => ({
    ...shared,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports[0]}`,
  });
  roles.push(
    ...(await Promise.all([
      startRole('api', apiEnv(ports[0]!), { name: 'api 1' }),
      startRole('api', apiEnv(ports[1]!), { name: 'api 2' }),
      startRole('worker', shared, { name: 'worker 1' }),
      startRole('worker', shared, { name: 'worker 2' }),
    ])),
  );
  driver = await createDriver({
    apis: ports.map((p) => `http://127.0.0.1:${p}`),
    db: database.db,
    graph,
    appSecret,
  });
  await driver.registerWebhook(receiver);
}, 300_000);

afterAll(async () => {
  await driver?.stop({ abandon: true });
  await Promise.all(roles.map((r) => r.kill('SIGTERM')));
  await Promise.all([graph?.close(), receiver?.close()]);
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('two APIs and two workers on one PostgreSQL and one Temporal server', () => {
  it(`take ${DOCUMENTS} documents from create to a signed download with every guarantee`, async () => {
    driver.startPlaying();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < DOCUMENTS) {
          const i = next++;
          await driver.createAndSend(
            i % 2 === 0 ? 'sequential' : 'parallel',
            i % 3 === 0 ? ['approve_only', 'sign'] : ['sign', 'review_only'],
          );
        }
      }),
    );
    await waitAllApproved(database.db, driver.documents, 300_000, driver);
    await driver.stop();
    console.info(`answers seen by the approvers and the client: ${JSON.stringify([...driver.answers])}`);

    expect(driver.documents).toHaveLength(DOCUMENTS);
    expect(driver.failures).toEqual([]);
    expectOneNotificationPerApprover(graph, driver.documents);
    await expectWebhooksOncePerEvent(receiver, driver.documents, 120_000);
    await expectReferencesGapFree(database.db, driver.accountId);
    expect(await database.db('documents').where({ account_id: driver.accountId }).count('* as n')).toEqual([
      { n: DOCUMENTS },
    ]);
    for (const i of [0, 41, 99]) await expectSignedDownload(driver, driver.documents[i]!, dir, pki.nssDir);
    // Every role is still running; none was needed twice.
    expect(roles.map((r) => r.child.exitCode)).toEqual([null, null, null, null]);
  }, 600_000);
});
