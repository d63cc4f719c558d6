import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
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
import {
  startRole,
  startTemporalServer,
  temporalAnswers,
  wathiqEnv,
  type RunningProcess,
  type TemporalServer,
} from '../helpers/processes.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * Issue 12, item 7: the Temporal server is killed with SIGKILL while documents are in flight, and started again on
 * the same port and SQLite file. Meanwhile the API answers 503 in the error envelope for what needs Temporal (and
 * serves what does not); afterwards the same worker and API processes, never restarted, take every document to
 * `approved` with no duplicate notification and no webhook event under two delivery ids.
 */

let dir: string;
let temporal: TemporalServer;
let database: TestDatabase;
let graph: FakeGraphApi;
let receiver: WebhookReceiver;
let pki: TestPki;
let api: RunningProcess;
let worker: RunningProcess;
let driver: LifecycleDriver;
let base: string;
const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-temporal-restart-'));
  [temporal, database, graph, receiver, pki] = await Promise.all([
    freePort().then((port) =>
      startTemporalServer({
        cliPath: inject('temporalCliPath'),
        port,
        dbFile: path.join(dir, 'temporal.db'),
      }),
    ),
    createTestDatabase(),
    startFakeGraphApi(),
    startWebhookReceiver(),
    createTestPki(path.join(dir, 'pki')),
  ]);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    ...wathiqEnv({
      databaseUrl: database.url,
      temporalAddress: temporal.address,
      taskQueue: 'faults-temporal',
      dataDir: path.join(dir, 'data'),
      whatsapp: { ...graph, appSecret },
      signing: pki,
    }),
    PORT: String(port),
    PUBLIC_BASE_URL: base,
    // What needs Temporal answers 503 once this runs out (20 s by default): the test waits for two such answers.
    APPROVAL_ANSWER_TIMEOUT_SECONDS: '5',
  };
  [worker, api] = await Promise.all([startRole('worker', env), startRole('api', env)]);
  driver = await createDriver({ apis: [base], db: database.db, graph, appSecret });
  await driver.registerWebhook(receiver);
});

afterAll(async () => {
  await driver?.stop({ abandon: true });
  await Promise.all([api?.kill('SIGTERM'), worker?.kill('SIGTERM')]);
  await temporal?.stop();
  await Promise.all([graph?.close(), receiver?.close()]);
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

interface Envelope {
  success: boolean;
  error?: { code: number; message: string; details: Record<string, string[]> };
}

describe('the Temporal server killed and restarted mid-flow', () => {
  it('answers 503 while it is down, and every document in flight finishes after it is back', async () => {
    const docs = [
      await driver.createAndSend('sequential', ['approve_only', 'sign', 'review_only']),
      await driver.createAndSend('sequential', ['sign', 'approve_only']),
    ];
    driver.startPlaying();
    // Mid-flow: the first approver of the first document has acted, the later ones not yet.
    await eventually(
      async () =>
        (await database.db('approvers').where({ document_id: docs[0]!.id, status: 'completed' })).length >= 1,
      60_000,
    );
    // A third document's approvers are notified but hold their actions until Temporal is down.
    driver.pause();
    docs.push(await driver.createAndSend('parallel', ['approve_only', 'sign']));
    await eventually(
      () => docs[2]!.phones.every((p) => graph.requests.some((r) => r.rawBody.includes(p))),
      60_000,
    );

    expect(await temporal.process.kill('SIGKILL')).toBe('SIGKILL');
    expect(await temporalAnswers(temporal.address)).toBe(false);

    // While it is down: health says which part is down; what needs Temporal is a 503 in the envelope, within the
    // approval client's deadline; what needs only PostgreSQL is served.
    const health = await fetch(`${base}/api/v1/health`);
    expect(health.status).toBe(503);
    expect(((await health.json()) as Envelope).error).toMatchObject({
      code: 503,
      details: { temporal: ['down'] },
    });
    // The third document is held mid-flow (its approvers wait), so it is surely open: the void needs Temporal.
    const voided = await driver.request(`/documents/${docs[2]!.id}/void`, { method: 'POST' });
    const voidBody = (await voided.json()) as Envelope;
    expect(voided.status, JSON.stringify(voidBody)).toBe(503);
    expect(voidBody).toMatchObject({ success: false, error: { code: 503 } });
    const status = await driver.request(`/documents/${docs[0]!.id}/status`);
    expect(status.status).toBe(200);
    // The approvers keep acting while it is down: their actions are answered 503 and retried (Meta redelivers a
    // refused notification; the page asks again).
    driver.resume();
    const failed = () => [...driver.answers.keys()].filter((k) => !/ 200$|^(create|send) /.test(k));
    await eventually(
      () => failed().some((k) => k.startsWith('page')) && failed().some((k) => k.startsWith('button')),
      60_000,
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify([...driver.answers])}`);
    });
    // Only 503s, first tries and the retries that followed them alike.
    expect(new Set(failed().map((k) => k.replace(/ \(retry\)$/, '')))).toEqual(
      new Set(['button 503', 'page 503']),
    );

    await temporal.restart();
    await waitAllApproved(database.db, driver.documents, 180_000, driver);
    await driver.stop();

    // Neither role was restarted.
    expect(api.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    expect(driver.failures).toEqual([]);
    expectOneNotificationPerApprover(graph, driver.documents);
    await expectWebhooksOncePerEvent(receiver, driver.documents, 60_000);
    await expectReferencesGapFree(database.db, driver.accountId);
    await expectSignedDownload(driver, docs[0]!, dir, pki.nssDir);
    expect((await fetch(`${base}/api/v1/health`)).status).toBe(200);
  }, 420_000);
});
