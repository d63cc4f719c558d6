import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  linkTokenOf,
  messagesTo,
  pagePost,
  PHONES,
  quickRepliesOf,
  requestFor,
  send,
  startFlowHarness,
  tapButton,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * An approver's answer does not wait for the next approver's WhatsApp request. The workflow sends that request
 * (a local activity) in the workflow task that also completes the approver's update, so the update's own answer
 * waits for Meta (until the send returns, or until Temporal's core completes the task on its own, measured at about
 * 8 s); the API answers once the action is written (src/approval/act-answer.ts). Here Meta (the fake Graph API)
 * takes SLOW_MS over the next request, less than those 8 s: the approver's answer comes while that send is still
 * unanswered. (Without act-answer.ts the answer comes after it, and these tests fail.)
 */
const SLOW_MS = 6_000;
const LONG = 60_000;

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({});
});
afterAll(() => h.close());

/** Whether the fake has answered any message to `phone` (it sets the message id when it answers). */
const answeredTo = (phone: string) => messagesTo(h, phone).some((r) => r.wamid !== undefined);

describe('the answer to an action', () => {
  it('from a WhatsApp button comes before the next approver’s slow request is answered', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const first = await requestFor(h, PHONES.saudiA, doc.id, LONG);
    h.graph.script({ kind: 'delay', ms: SLOW_MS });

    const tapped = await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(first)[0]! });
    expect(tapped.status).toBe(200);
    expect(answeredTo(PHONES.saudiB)).toBe(false);
    // The action is written, and the request does go out once Meta answers.
    const row = await h.service.database
      .db('approvers')
      .where({ document_id: doc.id, phone: PHONES.saudiA })
      .first<{ status: string }>('status');
    expect(row?.status).toBe('completed');
    await requestFor(h, PHONES.saudiB, doc.id, LONG);
    await eventually(() => answeredTo(PHONES.saudiB), LONG);
  });

  it('from the approval page carries the document as written, before the next approver’s request is answered', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: PHONES.saudiC, action_type: 'sign' },
        { name: 'B', phone: PHONES.uk, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const first = await requestFor(h, PHONES.saudiC, doc.id, LONG);
    h.graph.script({ kind: 'delay', ms: SLOW_MS });

    const signed = await pagePost(h, linkTokenOf(first), 'complete', { typed_name: 'A. Signer' });
    expect(signed.status).toBe(200);
    expect(answeredTo(PHONES.uk)).toBe(false);
    expect(((await signed.json()) as { data: unknown }).data).toEqual({
      status: 'in_progress',
      completed: 1,
      total: 2,
    });
    await eventually(() => answeredTo(PHONES.uk), LONG);
  });
});
