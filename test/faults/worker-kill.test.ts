import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/approval-flow.ts';
import { workflowTaskTimeouts } from '../helpers/history-timeouts.ts';
import { startFaultStack, TEMPORAL_SHAPES, type FaultStack } from '../helpers/fault-stack.ts';
import {
  expectOneNotificationPerApprover,
  expectReferencesGapFree,
  expectSignedDownload,
  expectWebhooksOncePerEvent,
  waitAllApproved,
} from '../helpers/lifecycle-driver.ts';
import { startTestTsa, type TestTsa } from '../helpers/tsa-server.ts';

/**
 * The worker process is killed with SIGKILL while it finalizes (it is waiting on the
 * time-stamp authority, which holds the request: the signed PDF is being made at that moment), then a new worker
 * process starts. The finalization runs again on it: every document ends approved with a valid signature, nobody is
 * notified twice, and no webhook event arrives under two delivery ids. On both Temporal shapes.
 *
 * The finalization's first attempt is a local activity, in the workflow task of the last action: the killed attempt
 * is given up with that task, at its time-out (10 s), and the task runs again on the new worker, finalization and all.
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

describe.each(TEMPORAL_SHAPES)(
  'the worker killed with SIGKILL during finalization (%s Temporal)',
  (shape) => {
    let stack: FaultStack;
    let tsa: TestTsa;
    let gate: Awaited<ReturnType<typeof startGatedTsa>>;

    beforeAll(async () => {
      stack = await startFaultStack({ name: 'worker-kill', shape });
      tsa = await startTestTsa(stack.pki.tsa);
      gate = await startGatedTsa(tsa);
      await stack.startRoles({
        apis: 1,
        workers: 1,
        tsaUrl: gate.url,
      });
    }, 600_000);

    afterAll(async () => {
      await stack?.stop();
      await Promise.all([gate?.close(), tsa?.close()]);
    });

    it('restarts, finalizes every document once, and keeps every guarantee', async () => {
      const { driver, db, graph, receiver, pki } = stack;
      await driver.createAndSend('parallel', ['sign', 'approve_only']);
      await driver.createAndSend('sequential', ['approve_only', 'sign']);
      await driver.createAndSend('parallel', ['review_only', 'sign']);
      driver.startPlaying();

      // Finalization is under way once the worker asks the TSA for a time-stamp (it is held, so it stays under way).
      await eventually(() => gate.received() >= 1, 120_000);
      expect(await stack.workers[0]!.kill('SIGKILL')).toBe('SIGKILL');
      const during = await db('documents')
        .whereIn(
          'id',
          driver.documents.map((d) => d.id),
        )
        .pluck('status');
      expect(during).not.toContain('approved');
      gate.release();

      await stack.startWorker('worker 2');
      // The killed attempt is given up with its workflow task, which then runs again here.
      await waitAllApproved(db, driver.documents, 180_000, driver);
      await driver.stop();

      expect(driver.failures).toEqual([]);
      expectOneNotificationPerApprover(graph, driver.documents);
      await expectWebhooksOncePerEvent(receiver, driver.documents, 60_000);
      await expectReferencesGapFree(db, driver.accountId);
      for (const doc of driver.documents) await expectSignedDownload(driver, doc, stack.dir, pki.nssDir);
      // Each finalization asked for a time-stamp; the one killed asked again on the new worker.
      expect(gate.received()).toBeGreaterThan(driver.documents.length);
      // The killed attempt was given up with the workflow task it ran in; the finalizations all ran as local
      // activities, the one killed too, so no ordinary finalization activity was needed.
      const timeouts = await workflowTaskTimeouts(
        stack.temporalAddress,
        driver.documents.map((d) => `document-${d.id}`),
      );
      expect(timeouts.timedOut).toBeGreaterThanOrEqual(1);
      expect(timeouts.activities).not.toContain('finalizeAndSendSignedCopies');
    }, 420_000);
  },
);
