import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalStatusQuery, type ApprovalView } from '../../src/features/approval/definitions.ts';
import { ApprovalAttentionKey } from '../../src/temporal/search-attributes.ts';
import {
  createDocument,
  eventually,
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
import { failWrites, type WriteFault } from '../helpers/write-faults.ts';

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

/**
 * Sends the document; its first approver (PHONES.saudiA) taps approve while `fault` refuses the action's write, and
 * the workflow parks on recordApproverAction with the fault's error. The tap waits on that write: returned pending.
 */
async function tapIntoFailingWrite(documentId: string, fault: WriteFault) {
  expect((await send(h, documentId)).status).toBe(200);
  const request = await requestFor(h, PHONES.saudiA, documentId, 60_000);
  const tapped = tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(request)[0]! });
  const view = await parkedOn(documentId, 'recordApproverAction');
  expect(view.attention!.error).toContain(fault.message);
  return { tapped, view };
}

interface RetryOutput {
  id: string;
  status: string;
  workflow: ApprovalView;
}

describe('a read-model write that fails for good', () => {
  it('recordApproverAction: parks in attention, then documents:retry-finalization records it and the document is approved', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    const fault = await failWrites(db(), 'approverCompleted');
    let tapped: Promise<Response> | undefined;
    try {
      const parked = await tapIntoFailingWrite(doc.id, fault);
      tapped = parked.tapped;
      const { view } = parked;
      expect(Date.parse(view.attention!.since)).not.toBeNaN();
      expect(view.approvers[0]!.state).toBe('completed'); // the workflow has the action; the read model not yet
      expect(await attentionAttribute(doc.id)).toBe('recordApproverAction');
      const stuck = await statusOf(h, doc.id);
      expect(stuck.status).toBe('pending');
      expect(stuck.approvers[0]!.status).toBe('notified');
    } finally {
      await fault.remove(); // the operator fixes the database
    }

    const retried = await cli(doc.reference);
    expect(retried.code, retried.stderr).toBe(0);
    const out = JSON.parse(retried.stdout) as RetryOutput;
    expect(out).toMatchObject({ id: doc.id, status: 'pending' });
    expect(out.workflow.attention).toMatchObject({ activity: 'recordApproverAction' }); // taken, not yet run

    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 90_000);
    expect(((await handleOf(doc.id).result()) as ApprovalView).status).toBe('approved');
    expect((await handleOf(doc.id).query(approvalStatusQuery)).attention).toBeNull();
    expect(await attentionAttribute(doc.id)).toBeUndefined();
    const final = await statusOf(h, doc.id);
    expect(final.approvers[0]).toMatchObject({ status: 'completed', action_channel: 'whatsapp' });
    expect(await eventsOf(doc.id)).toEqual([
      'document.created',
      'document.sent',
      'approver.notified',
      'approver.completed',
      'document.approved',
    ]);
    await tapped;

    // Nothing is parked any more: a second retry is refused, naming the status.
    const again = await cli(doc.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/approved/);
  }, 240_000);

  it('an action whose write fails does not ask the next approver: a sequential document asks them once it lands', async () => {
    // approval-lean-v5 writes the action and asks the next approver in one activity (recordActionAndNotify), the
    // write first: a write that cannot land must leave the next approver unasked until the operator's retry.
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    const fault = await failWrites(db(), 'approverCompleted');
    let tapped: Promise<Response> | undefined;
    try {
      const parked = await tapIntoFailingWrite(doc.id, fault);
      tapped = parked.tapped;
      const { view } = parked;
      expect(view.approvers.map((a) => a.state)).toEqual(['completed', 'waiting']);
      expect(await requestsFor(h, PHONES.saudiB, doc.id)).toEqual([]);
      const stuck = await statusOf(h, doc.id);
      expect(stuck.approvers.map((a) => a.status)).toEqual(['notified', 'waiting']);
    } finally {
      await fault.remove();
    }

    const retried = await cli(doc.id);
    expect(retried.code, retried.stderr).toBe(0);
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
    await tapped;
  }, 240_000);

  it('markDocumentExpired: parks in attention at the deadline, then the retry expires the document', async () => {
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
      const view = await parkedOn(doc.id, 'markDocumentExpired');
      expect(view.status).toBe('expired');
      expect(view.attention!.error).toContain(fault.message);
      expect(await attentionAttribute(doc.id)).toBe('markDocumentExpired');
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
