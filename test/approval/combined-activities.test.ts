import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  localActivities,
  messagesTo,
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
/**
 * Each test's approvers have numbers no other test here messages: another document's signed copy still on its way
 * to a shared number would take the scripted failure, or add to the counts.
 */
const SEQUENTIAL = { a: '966531231001', b: '966531231002' };
const PARALLEL = ['966531231011', '966531231012', '966531231013'];
const BEGIN_FAILS = ['966531231021', '966531231022', '966531231023'];
/** A parallel document whose three approvers approve by WhatsApp button. */
const parallelOfThree = (phones: string[]) =>
  createDocument(h, {
    workflowType: 'parallel',
    approvers: phones.map((phone, i) => ({ name: 'ABC'[i]!, phone, action_type: 'approve_only' as const })),
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
        { name: 'A', phone: SEQUENTIAL.a, action_type: 'approve_only' },
        { name: 'B', phone: SEQUENTIAL.b, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const request = await requestFor(h, SEQUENTIAL.a, doc.id, LONG);
    // B's request, sent once the run has followed A's recorded action, fails the first time.
    h.graph.scriptFor(SEQUENTIAL.b, { kind: 'raw', status: 500, body: 'outage' });
    expect((await tapButton(h, { from: SEQUENTIAL.a, payload: quickRepliesOf(request)[0]! })).status).toBe(
      200,
    );
    await eventually(() => accepted(SEQUENTIAL.b).length === 1, LONG);
    expect(messagesTo(h, SEQUENTIAL.b)).toHaveLength(2); // the failed attempt, then the retry
    await approveByButton(SEQUENTIAL.b, doc.id);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', LONG);
    expect(accepted(SEQUENTIAL.b).filter((r) => quickRepliesOf(r).length > 0)).toHaveLength(1);
    // B's request, taken over on the notification policy; the finalization ran as a local activity (its marker
    // in the history once the run has completed).
    await h.service.temporal.client.workflow.getHandle(`document-${doc.id}`).result();
    expect(await scheduledActivities(h, doc.id)).toEqual(['notifyApprover']);
    expect((await localActivities(h, doc.id)).at(-1)).toEqual({
      name: 'finalizeAndSendSignedCopies',
      failed: false,
    });
    const b = (await statusOf(h, doc.id)).approvers[1]!;
    expect(b.status).toBe('completed');
  }, 180_000);

  it('that WhatsApp fails among a parallel document’s first requests is retried alone; the others go once', async () => {
    const doc = await parallelOfThree(PARALLEL);
    const before = PARALLEL.map((phone) => messagesTo(h, phone).length);
    // One of the three requests beginApproval sends side by side fails.
    h.graph.scriptFor(PARALLEL[1]!, { kind: 'raw', status: 500, body: 'outage' });
    expect((await send(h, doc.id)).status).toBe(200);
    const since = () => PARALLEL.map((phone, i) => messagesTo(h, phone).slice(before[i]));
    // Every approver's request accepted: the failed one only after notifyApprover's retry (about a second later).
    await eventually(() => since().every((messages) => messages.some((r) => r.wamid !== undefined)), LONG);
    const sent = since();
    // Exactly one approver saw a failed attempt and a retry; every approver has one accepted request.
    expect(sent.map((m) => m.length)).toEqual([1, 2, 1]);
    for (const messages of sent) expect(messages.filter((r) => r.wamid !== undefined)).toHaveLength(1);
    expect(await scheduledActivities(h, doc.id)).toEqual(['notifyApprover']);
    for (const phone of PARALLEL) await approveByButton(phone, doc.id);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', LONG);
  }, 180_000);

  it('when beginApproval fails, the first requests go together in one notifyApprovers; one WhatsApp fails is retried alone', async () => {
    const phones = BEGIN_FAILS;
    const doc = await parallelOfThree(phones);
    const before = phones.map((phone) => messagesTo(h, phone).length);
    const since = () => phones.map((phone, i) => messagesTo(h, phone).slice(before[i]));
    // PostgreSQL refuses the first three records of the send: beginApproval's three attempts (it sends nothing
    // when its record fails); markDocumentSent then records it on its own.
    const fault = await failWrites(h.service.database.db, 'documentSent', { times: 3 });
    try {
      // One of the three requests sent together fails.
      h.graph.scriptFor(phones[0]!, { kind: 'raw', status: 500, body: 'outage' });
      expect((await send(h, doc.id)).status).toBe(200);
      await eventually(() => since().every((messages) => messages.some((r) => r.wamid !== undefined)), LONG);
    } finally {
      await fault.remove();
    }
    const sent = since();
    expect(sent.map((m) => m.length)).toEqual([2, 1, 1]);
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
