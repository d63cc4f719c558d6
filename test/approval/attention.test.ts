import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalStatusQuery, type ApprovalView } from '../../src/features/approval/definitions.ts';
import { ApprovalAttentionKey } from '../../src/temporal/search-attributes.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  pagePost,
  PHONES,
  quickRepliesOf,
  requestFor,
  requestsFor,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { retryFinalizationCli } from '../helpers/retry-cli.ts';
import { failWrites } from '../helpers/write-faults.ts';

/**
 * For read-model writes: a write of the approval workflow that exhausts its retry policy
 * (APPROVAL_WRITE_RETRY_SECONDS, 3 s here) parks the workflow in `attention` — visible in its `status` query and as
 * the search attribute ApprovalAttention — until the operator's `documents:retry-finalization` resumes it. The
 * failure is real: a PL/pgSQL trigger makes PostgreSQL refuse the write until the test drops it.
 */
let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({ env: { APPROVAL_WRITE_RETRY_SECONDS: '3' } });
});
afterAll(() => h.close());

const db = () => h.service.database.db;
const handleOf = (documentId: string) =>
  h.service.temporal.client.workflow.getHandle(`document-${documentId}`);
const eventsOf = async (documentId: string) =>
  (await db()('document_events').where({ document_id: documentId }).orderBy('id')).map(
    (e: { event: string }) => e.event,
  );
const attentionAttribute = async (documentId: string) =>
  (await handleOf(documentId).describe()).typedSearchAttributes.get(ApprovalAttentionKey);

const cli = (arg: string) => retryFinalizationCli(h.service, arg);

/** Waits until the workflow reports it is parked on `activity`; returns what its `status` query says. */
const parkedOn = (documentId: string, activity: string) =>
  eventually(async () => {
    const view = await handleOf(documentId).query(approvalStatusQuery);
    return view.attention?.activity === activity && view;
  }, 90_000);

describe('a read-model write that fails for good', () => {
  it('an action whose write PostgreSQL refuses: answered with an error, nothing written, the next approver not asked', async () => {
    // The action is decided and written in the answer's transaction: a write that cannot land leaves the read
    // model and the run as they were, and the approver asks again once it can.
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const request = await requestFor(h, PHONES.saudiA, doc.id, 60_000);
    const fault = await failWrites(db(), 'approverCompleted');
    try {
      expect((await pagePost(h, linkTokenOf(request), 'complete', {})).status).toBe(500);
      const view = await handleOf(doc.id).query(approvalStatusQuery);
      expect(view.approvers.map((a) => a.state)).toEqual(['notified', 'waiting']);
      expect(view.attention).toBeNull();
      expect((await statusOf(h, doc.id)).approvers.map((a) => a.status)).toEqual(['notified', 'waiting']);
      expect(await db()('approval_signals').where({ document_id: doc.id })).toEqual([]);
      expect(await requestsFor(h, PHONES.saudiB, doc.id)).toEqual([]);
    } finally {
      await fault.remove();
    }

    expect((await pagePost(h, linkTokenOf(request), 'complete', {})).status).toBe(200);
    const second = await requestFor(h, PHONES.saudiB, doc.id, 60_000);
    expect((await tapButton(h, { from: PHONES.saudiB, payload: quickRepliesOf(second)[0]! })).status).toBe(
      200,
    );
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 90_000);
    expect(await requestsFor(h, PHONES.saudiB, doc.id)).toHaveLength(1);
    expect(await eventsOf(doc.id)).toEqual([
      'document.created',
      'document.sent',
      'approver.notified',
      'approver.completed',
      'approver.notified',
      'approver.completed',
      'document.approved',
    ]);
  }, 240_000);

  it('closeDocument (the expiry): parks in attention at the deadline, then the retry expires the document', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    await db()('documents')
      .where({ id: doc.id })
      .update({ expires_at: new Date(Date.now() + 3000) });
    const fault = await failWrites(db(), 'documentExpired');
    try {
      expect((await send(h, doc.id)).status).toBe(200);
      const view = await parkedOn(doc.id, 'closeDocument');
      expect(view.status).toBe('pending'); // expired once the conditional write lands
      expect(view.attention!.error).toContain(fault.message);
      expect(await attentionAttribute(doc.id)).toBe('closeDocument');
      expect((await statusOf(h, doc.id)).status).toBe('pending');
    } finally {
      await fault.remove();
    }

    const retried = await cli(doc.id);
    expect(retried.code, retried.stderr).toBe(0);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'expired', 90_000);
    expect(((await handleOf(doc.id).result()) as ApprovalView).status).toBe('expired');
    expect(await attentionAttribute(doc.id)).toBeUndefined();
    expect(await eventsOf(doc.id)).toEqual([
      'document.created',
      'document.sent',
      'approver.notified',
      'document.expired',
    ]);
  }, 240_000);
});
