import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionType } from '../../src/domain/model.ts';
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
 * after the action's write, in the same activity (`recordActionAndNotify`, patch `approval-lean-v5`; before it, a
 * local activity in the workflow task that also completes the approver's update), so the update's own answer waits
 * for Meta (until the send returns, or, under `approval-lean-v4`, until Temporal's core completes the task on its
 * own, measured at about 8 s); the API answers once the action is written (src/approval/act-answer.ts). Here Meta (the fake Graph API)
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

/**
 * A sequential document of two, sent: the first approver's request is returned, and Meta will take SLOW_MS over the
 * second approver's request. Scripted for that number alone, which no other test here messages: the slow answer
 * cannot be taken by another document's message (a signed copy of the test before).
 */
async function sentWithSlowNextRequest(
  first: { phone: string; action: ActionType },
  second: { phone: string },
) {
  const doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [
      { name: 'A', phone: first.phone, action_type: first.action },
      { name: 'B', phone: second.phone, action_type: 'approve_only' },
    ],
  });
  expect((await send(h, doc.id)).status).toBe(200);
  const request = await requestFor(h, first.phone, doc.id, LONG);
  h.graph.scriptFor(second.phone, { kind: 'delay', ms: SLOW_MS });
  return { doc, request };
}

describe('the answer to an action', () => {
  it('from a WhatsApp button comes before the next approver’s slow request is answered', async () => {
    const { doc, request } = await sentWithSlowNextRequest(
      { phone: PHONES.saudiA, action: 'approve_only' },
      { phone: PHONES.saudiB },
    );
    const tapped = await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(request)[0]! });
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
    const { request } = await sentWithSlowNextRequest(
      { phone: PHONES.saudiC, action: 'sign' },
      { phone: PHONES.uk },
    );
    const signed = await pagePost(h, linkTokenOf(request), 'complete', { typed_name: 'A. Signer' });
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
