import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultStack, TEMPORAL_SHAPES, type FaultStack } from '../helpers/fault-stack.ts';
import {
  expectOneNotificationPerApprover,
  expectReferencesGapFree,
  expectSignedDownload,
  expectWebhooksOncePerEvent,
  waitAllApproved,
} from '../helpers/lifecycle-driver.ts';

/**
 * Two API processes and two worker processes against one PostgreSQL and one Temporal server take 100 documents
 * through their lifecycle — created, sent, each approver acting (by WhatsApp button through Meta-signed
 * notifications, or on the approval page), approved, downloaded and signature-checked on a sample — with requests
 * spread over both APIs in turn. Every document ends approved, nobody is notified twice, each webhook event arrives
 * under one delivery id, and the reference numbers are 1..100 with no gap and no duplicate. On both Temporal shapes.
 */

const DOCUMENTS = 100;
const CONCURRENCY = 6;

describe.each(TEMPORAL_SHAPES)('two APIs and two workers on one PostgreSQL and one %s Temporal', (shape) => {
  let stack: FaultStack;

  beforeAll(async () => {
    stack = await startFaultStack({ name: 'scale-out', shape });
    // One rate limit per key across both APIs.
    await stack.startRoles({ apis: 2, workers: 2, env: { RATE_LIMIT_STORE: 'postgres' } });
  }, 600_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it(`take ${DOCUMENTS} documents from create to a signed download with every guarantee`, async () => {
    const { driver, db, graph, receiver, pki } = stack;
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
    await waitAllApproved(db, driver.documents, 300_000, driver);
    await driver.stop();
    console.info(`answers seen by the approvers and the client: ${JSON.stringify([...driver.answers])}`);

    expect(driver.documents).toHaveLength(DOCUMENTS);
    expect(driver.failures).toEqual([]);
    expectOneNotificationPerApprover(graph, driver.documents);
    await expectWebhooksOncePerEvent(receiver, driver.documents, 120_000);
    await expectReferencesGapFree(db, driver.accountId);
    expect(await db('documents').where({ account_id: driver.accountId }).count('* as n')).toEqual([
      { n: DOCUMENTS },
    ]);
    for (const i of [0, 41, 99])
      await expectSignedDownload(driver, driver.documents[i]!, stack.dir, pki.nssDir);
    // Every role is still running; none was needed twice.
    expect([...stack.apis, ...stack.workers].map((r) => r.child.exitCode)).toEqual([null, null, null, null]);
  }, 600_000);
});
