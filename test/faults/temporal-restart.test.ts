import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/approval-flow.ts';
import { startFaultStack, TEMPORAL_SHAPES, type FaultStack } from '../helpers/fault-stack.ts';
import {
  expectOneNotificationPerApprover,
  expectReferencesGapFree,
  expectSignedDownload,
  expectWebhooksOncePerEvent,
  waitAllApproved,
} from '../helpers/lifecycle-driver.ts';
import { temporalAnswers } from '../helpers/processes.ts';

/**
 * The Temporal server is killed with SIGKILL while documents are in flight, and started again on the same port and
 * state (the dev server's SQLite file, or the production shape's PostgreSQL). Meanwhile the API answers 503 in the
 * error envelope for what needs Temporal (a void), takes approvers' actions (PostgreSQL decides them; the runs hear of
 * them from the signal relay once Temporal is back) and serves what needs only PostgreSQL; afterwards the same
 * worker and API processes, never restarted, take every document to `approved` with no duplicate notification and
 * no webhook event under two delivery ids.
 */

interface Envelope {
  success: boolean;
  error?: { code: number; message: string; details: Record<string, string[]> };
}

describe.each(TEMPORAL_SHAPES)('the %s Temporal server killed and restarted mid-flow', (shape) => {
  let stack: FaultStack;

  beforeAll(async () => {
    stack = await startFaultStack({ name: 'temporal-restart', shape, ownTemporal: true });
    // What needs Temporal answers 503 once this runs out (20 s by default): the test waits for two such answers.
    await stack.startRoles({ apis: 1, workers: 1, env: { APPROVAL_ANSWER_TIMEOUT_SECONDS: '5' } });
  }, 600_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 503 while it is down, and every document in flight finishes after it is back', async () => {
    const { driver, db, graph, receiver, pki } = stack;
    const temporal = stack.temporal!;
    const base = stack.apiBases[0]!;
    const docs = [
      await driver.createAndSend('sequential', ['approve_only', 'sign', 'review_only']),
      await driver.createAndSend('sequential', ['sign', 'approve_only']),
    ];
    driver.startPlaying();
    // Mid-flow: the first approver of the first document has acted, the later ones not yet.
    await eventually(
      async () =>
        (await db('approvers').where({ document_id: docs[0]!.id, status: 'completed' })).length >= 1,
      60_000,
    );
    // A third document's approvers are notified but hold their actions until Temporal is down.
    driver.pause();
    docs.push(await driver.createAndSend('parallel', ['approve_only', 'sign']));
    await eventually(
      () => docs[2]!.phones.every((p) => graph.requests.some((r) => r.rawBody.includes(p))),
      60_000,
    );

    const workerHealth = () => fetch(stack.workerHealthUrls[0]!).then((r) => r.status);
    expect(await workerHealth()).toBe(200);
    expect(await temporal.process.kill('SIGKILL')).toBe('SIGKILL');
    expect(await temporalAnswers(temporal.address)).toBe(false);
    // The worker process runs on, retrying its polls; its health check says it can do nothing meanwhile.
    expect(await workerHealth()).toBe(503);

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
    // The approvers keep acting while it is down, and are answered at once: PostgreSQL decides and records an
    // action (their turn, not acted, the document open) with the signal that tells the run, which the relay sends
    // once Temporal is back. The third document's two approvers act now; nothing is answered but 200.
    driver.resume();
    await eventually(
      async () =>
        (await db('approvers').where({ document_id: docs[2]!.id, status: 'completed' })).length === 2,
      60_000,
    );
    expect(await temporalAnswers(temporal.address)).toBe(false);
    const queued = await db('approval_signals').where({ document_id: docs[2]!.id }).whereNull('sent_at');
    expect(queued).toHaveLength(2);
    const failed = [...driver.answers.keys()].filter((k) => !/ 200$|^(create|send) /.test(k));
    expect(failed).toEqual([]);

    await temporal.restart();
    await eventually(async () => (await workerHealth()) === 200, 60_000);
    await waitAllApproved(db, driver.documents, 180_000, driver);
    await driver.stop();

    // Neither role was restarted.
    expect(stack.apis[0]!.child.exitCode).toBeNull();
    expect(stack.workers[0]!.child.exitCode).toBeNull();
    expect(driver.failures).toEqual([]);
    expectOneNotificationPerApprover(graph, driver.documents);
    await expectWebhooksOncePerEvent(receiver, driver.documents, 60_000);
    await expectReferencesGapFree(db, driver.accountId);
    await expectSignedDownload(driver, docs[0]!, stack.dir, pki.nssDir);
    expect((await fetch(`${base}/api/v1/health`)).status).toBe(200);
  }, 420_000);
});
