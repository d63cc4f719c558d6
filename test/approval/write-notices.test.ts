import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWriteNotices, type WriteNotices } from '../../src/features/approval/write-notices.ts';
import { actionEvidenceStore } from '../../src/features/approval/action-evidence-store.ts';
import { createLogger } from '../../src/logger.ts';
import {
  createDocument,
  eventually,
  PHONES,
  send,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * The answers to an action and to a send wait for PostgreSQL to announce the workflow's write (the evidence
 * accepted, migration 028; `document.sent` recorded, migration 029; both on commit) rather than reading the row
 * again and again. Here notices of their own on the service's database: a notice settles the wait for its key and
 * no other; a lost connection settles every wait as unheard (the caller then reads the row), and the notices are
 * heard again by themselves.
 */
let h: FlowHarness;
let notices: WriteNotices;
beforeAll(async () => {
  h = await startFlowHarness();
  notices = await createWriteNotices({
    db: h.service.database.db,
    logger: createLogger({ logLevel: 'silent' }),
  });
}, 180_000);
afterAll(async () => {
  await notices?.close();
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

describe('the notices of the workflow’s writes', () => {
  it('settle the wait of the evidence accepted, on commit, and no other', async () => {
    const id = await submitted();
    const wait = notices.evidenceAccepted.watch(id)!;
    const other = notices.evidenceAccepted.watch(randomUUID())!;
    expect(wait).toBeDefined();
    expect(await within(wait.heard, 300)).toBe('pending');
    await db().transaction(async (trx) => {
      await actionEvidenceStore(trx).markAccepted(id);
      // Not before the transaction commits.
      expect(await within(wait.heard, 300)).toBe('pending');
    });
    expect(await within(wait.heard, 5_000)).toBe(true);
    expect(await within(other.heard, 300)).toBe('pending');
    other.cancel();
  });

  it('settle the wait of a send once the workflow has recorded it', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    const wait = notices.documentSent.watch(doc.id)!;
    expect(wait).toBeDefined();
    expect((await send(h, doc.id)).status).toBe(200);
    expect(await within(wait.heard, 10_000)).toBe(true);
    const recorded = await db()('document_events').where({ document_id: doc.id, event: 'document.sent' });
    expect(recorded).toHaveLength(1);
  });

  it('settle every wait as unheard when their connection is lost, then are heard again', async () => {
    const id = await submitted();
    const wait = notices.evidenceAccepted.watch(id)!;
    // Every connection listening for evidence notices (these notices' and the API server's) is cut.
    await db().raw(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN wathiq_evidence_accepted;%'`,
    );
    expect(await within(wait.heard, 5_000)).toBe(false);
    // Back within its reconnect delay; a wait started then is heard again.
    const again = await eventually(() => notices.evidenceAccepted.watch(id), 10_000);
    await actionEvidenceStore(db()).markAccepted(id);
    expect(await within(again.heard, 5_000)).toBe(true);
  });
});
