import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvidenceWatch, type EvidenceWatch } from '../../src/approval/evidence-watch.ts';
import { actionEvidenceStore } from '../../src/db/stores/action-evidence-store.ts';
import { createLogger } from '../../src/logger.ts';
import {
  createDocument,
  eventually,
  PHONES,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * The answer to an action waits for PostgreSQL to announce its evidence accepted (migration 028's trigger, on
 * commit) rather than reading the row again and again. Here a watch of its own on the service's database: a
 * notice settles the wait for its evidence and no other; a lost connection settles every wait as unheard (the
 * caller then reads the row), and the watch listens again by itself.
 */
let h: FlowHarness;
let watch: EvidenceWatch;
beforeAll(async () => {
  h = await startFlowHarness();
  watch = await createEvidenceWatch({
    db: h.service.database.db,
    logger: createLogger({ logLevel: 'silent' }),
  });
}, 180_000);
afterAll(async () => {
  await watch?.close();
  await h?.close();
});

const db = () => h.service.database.db;
/** A submitted evidence row of a fresh document's approver. */
async function submitted(): Promise<string> {
  const doc = await createDocument(h, {
    workflowType: 'parallel',
    approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
  });
  const { id: approverId } = await db()('approvers')
    .where({ document_id: doc.id })
    .first<{ id: string }>('id');
  return actionEvidenceStore(db()).submit({
    documentId: doc.id,
    approverId,
    kind: 'complete',
    evidence: { at: new Date().toISOString(), channel: 'page' },
  });
}
/** What a promise has settled to within `ms`, or 'pending'. */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);

describe('the evidence watch', () => {
  it('settles the wait of the evidence accepted, on commit, and no other', async () => {
    const id = await submitted();
    const wait = watch.watch(id)!;
    const other = watch.watch(randomUUID())!;
    expect(wait).toBeDefined();
    expect(await within(wait.accepted, 300)).toBe('pending');
    await db().transaction(async (trx) => {
      await actionEvidenceStore(trx).markAccepted(id);
      // Not before the transaction commits.
      expect(await within(wait.accepted, 300)).toBe('pending');
    });
    expect(await within(wait.accepted, 5_000)).toBe(true);
    expect(await within(other.accepted, 300)).toBe('pending');
    other.cancel();
  });

  it('settles every wait as unheard when its connection is lost, then listens again', async () => {
    const id = await submitted();
    const wait = watch.watch(id)!;
    // Every connection listening for evidence notices (this watch's and the API server's) is cut.
    await db().raw(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN wathiq_evidence_accepted'`,
    );
    expect(await within(wait.accepted, 5_000)).toBe(false);
    // Back within its reconnect delay; a wait started then is heard again.
    const again = await eventually(() => watch.watch(id), 10_000);
    await actionEvidenceStore(db()).markAccepted(id);
    expect(await within(again.accepted, 5_000)).toBe(true);
  });
});
