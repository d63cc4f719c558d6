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
import { makePdf } from '../helpers/pdf.ts';
import { alive, postmasterPid } from '../helpers/processes.ts';

/**
 * PostgreSQL of its own for this test, stopped with a real fast shutdown (SIGINT to the postmaster: every connection
 * is terminated with 57P01) and started again on the same port and data folder while the API and the worker run.
 * Meanwhile the API answers 503 `unavailable` (not 500, not a hang); afterwards the same processes, never
 * restarted, serve again and every document in flight ends approved, with no duplicate notification and no webhook
 * event under two delivery ids. A create refused during the outage left nothing. On both Temporal shapes.
 */

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

describe.each(TEMPORAL_SHAPES)('PostgreSQL restarted while the API serves (%s Temporal)', (shape) => {
  let stack: FaultStack;

  beforeAll(async () => {
    stack = await startFaultStack({ name: 'postgres-restart', shape, ownPostgres: true });
    await stack.startRoles({ apis: 1, workers: 1 });
  }, 600_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 503 while it is down and recovers without a restart of the API or the worker', async () => {
    const { driver, db, postgres, graph, receiver, pki } = stack;
    const base = stack.apiBases[0]!;
    const docs = [
      await driver.createAndSend('sequential', ['approve_only', 'sign', 'review_only']),
      await driver.createAndSend('parallel', ['sign', 'approve_only']),
    ];
    driver.startPlaying();
    await eventually(async () => (await db('approvers').where({ status: 'completed' })).length >= 1, 60_000);

    // A real fast shutdown: SIGINT to the postmaster, which terminates every connection and exits.
    const pid = await postmasterPid(postgres!.dataDir);
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
    await postgres!.start();
    // The same API process answers again: its pool dropped the dead connections and opened new ones.
    await eventually(async () => (await fetch(`${base}/api/v1/health`)).status === 200, 60_000);
    expect((await driver.request(`/documents/${docs[0]!.id}/status`)).status).toBe(200);

    await waitAllApproved(db, driver.documents, 180_000, driver);
    await driver.stop();
    expect(stack.apis[0]!.child.exitCode).toBeNull();
    expect(stack.workers[0]!.child.exitCode).toBeNull();
    expect(driver.failures).toEqual([]);
    expect(await db('documents').where({ title_en: 'Created during the outage' })).toEqual([]);
    expectOneNotificationPerApprover(graph, driver.documents);
    await expectWebhooksOncePerEvent(receiver, driver.documents, 60_000);
    await expectReferencesGapFree(db, driver.accountId);
    await expectSignedDownload(driver, docs[0]!, stack.dir, pki.nssDir);
  }, 420_000);
});
