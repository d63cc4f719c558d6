import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  localActivities,
  messagesTo,
  PHONES,
  quickRepliesOf,
  requestFor,
  scheduledActivities,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { failWrites } from '../helpers/write-faults.ts';

/**
 * Approval requests go from local activities that may do something else: the first ones from `beginApproval` (with
 * the send's record), a sequential document's next one from `notifyApprovers` once the run has followed the
 * previous approver's recorded action. A request WhatsApp fails there for the moment is not lost:
 * the workflow hands it to the ordinary `notifyApprover` on the notification policy, and it reaches the approver
 * once. Meta (the fake Graph API) answers the scripted request with a retryable 500.
 *
 * When `beginApproval` itself fails, the send is recorded on its own and the first requests, due together, go in
 * one local activity (`notifyApprovers`) with the same hand-over for a request that fails there.
 */
const LONG = 60_000;

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({});
});
afterAll(() => h.close());

/** The messages to `phone` WhatsApp accepted (the fake sets the message id on those it answers with 200). */
const accepted = (phone: string) => messagesTo(h, phone).filter((r) => r.wamid !== undefined);
/** A parallel document whose three approvers approve by WhatsApp button. */
const parallelOfThree = () =>
  createDocument(h, {
    workflowType: 'parallel',
    approvers: [
      { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
      { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      { name: 'C', phone: PHONES.saudiC, action_type: 'approve_only' },
    ],
  });
const approveByButton = async (phone: string, documentId: string) => {
  const request = await requestFor(h, phone, documentId, LONG);
  expect((await tapButton(h, { from: phone, payload: quickRepliesOf(request)[0]! })).status).toBe(200);
};

describe('an approval request sent by a combined activity', () => {
  it('that WhatsApp fails after the previous action is recorded is retried on its own and arrives once', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const request = await requestFor(h, PHONES.saudiA, doc.id, LONG);
    // The next message to Meta is B's request, sent once the run has followed A's recorded action.
    h.graph.script({ kind: 'raw', status: 500, body: 'outage' });
    expect((await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(request)[0]! })).status).toBe(
      200,
    );
    await eventually(() => accepted(PHONES.saudiB).length === 1, LONG);
    expect(messagesTo(h, PHONES.saudiB)).toHaveLength(2); // the failed attempt, then the retry
    await approveByButton(PHONES.saudiB, doc.id);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', LONG);
    expect(accepted(PHONES.saudiB).filter((r) => quickRepliesOf(r).length > 0)).toHaveLength(1);
    expect(await scheduledActivities(h, doc.id)).toEqual([
      'notifyApprover', // B's request, taken over on the notification policy
      'finalizeAndSendSignedCopies',
    ]);
    const b = (await statusOf(h, doc.id)).approvers[1]!;
    expect(b.status).toBe('completed');
  }, 180_000);

  it('that WhatsApp fails among a parallel document’s first requests is retried alone; the others go once', async () => {
    const doc = await parallelOfThree();
    const before = {
      a: messagesTo(h, PHONES.saudiA).length,
      b: messagesTo(h, PHONES.saudiB).length,
      c: messagesTo(h, PHONES.saudiC).length,
    };
    // One of the three requests beginApproval sends side by side fails.
    h.graph.script({ kind: 'raw', status: 500, body: 'outage' });
    expect((await send(h, doc.id)).status).toBe(200);
    const since = () => [
      messagesTo(h, PHONES.saudiA).slice(before.a),
      messagesTo(h, PHONES.saudiB).slice(before.b),
      messagesTo(h, PHONES.saudiC).slice(before.c),
    ];
    // Every approver's request accepted: the failed one only after notifyApprover's retry (about a second later).
    await eventually(() => since().every((messages) => messages.some((r) => r.wamid !== undefined)), LONG);
    const sent = since();
    // Exactly one approver saw a failed attempt and a retry; every approver has one accepted request.
    expect(sent.map((m) => m.length).sort()).toEqual([1, 1, 2]);
    for (const messages of sent) expect(messages.filter((r) => r.wamid !== undefined)).toHaveLength(1);
    expect(await scheduledActivities(h, doc.id)).toEqual(['notifyApprover']);
    for (const phone of [PHONES.saudiA, PHONES.saudiB, PHONES.saudiC]) await approveByButton(phone, doc.id);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', LONG);
  }, 180_000);

  it('when beginApproval fails, the first requests go together in one notifyApprovers; one WhatsApp fails is retried alone', async () => {
    const doc = await parallelOfThree();
    const phones = [PHONES.saudiA, PHONES.saudiB, PHONES.saudiC];
    const before = phones.map((phone) => messagesTo(h, phone).length);
    const since = () => phones.map((phone, i) => messagesTo(h, phone).slice(before[i]));
    // PostgreSQL refuses the first three records of the send: beginApproval's three attempts (it sends nothing
    // when its record fails); markDocumentSent then records it on its own.
    const fault = await failWrites(h.service.database.db, 'documentSent', { times: 3 });
    try {
      // The first of the three requests sent together fails.
      h.graph.script({ kind: 'raw', status: 500, body: 'outage' });
      expect((await send(h, doc.id)).status).toBe(200);
      await eventually(() => since().every((messages) => messages.some((r) => r.wamid !== undefined)), LONG);
    } finally {
      await fault.remove();
    }
    const sent = since();
    expect(sent.map((m) => m.length).sort()).toEqual([1, 1, 2]);
    for (const messages of sent) expect(messages.filter((r) => r.wamid !== undefined)).toHaveLength(1);
    expect(await localActivities(h, doc.id)).toEqual([
      { name: 'beginApproval', failed: true },
      { name: 'approvalPolicies', failed: false },
      { name: 'markDocumentSent', failed: false },
      { name: 'notifyApprovers', failed: false }, // the three requests, one of them reported failed
    ]);
    expect(await scheduledActivities(h, doc.id)).toEqual(['notifyApprover']); // that one, on its own
    const events = await h.service.database
      .db('document_events')
      .where({ document_id: doc.id, event: 'document.sent' })
      .count<{ count: string }[]>('* as count');
    expect(Number(events[0]!.count)).toBe(1);
    for (const phone of phones) await approveByButton(phone, doc.id);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', LONG);
  }, 180_000);
});
