import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  linkTokenOf,
  pagePost,
  PHONES,
  quickRepliesOf,
  remindAsAClientWould,
  requestFor,
  requestsFor,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  templateNameOf,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Signing groups through the real API, workflow and WhatsApp provider (the fake Graph API at the
 * border): in a sequential document, approvers sharing an order_index are notified together, act in any order, and
 * the next position is notified only when the whole group has completed. The automatic reminders' timers are real
 * and scaled (APPROVAL_TIMER_SCALE: an hour of the schedule is one second).
 */
const LONG = 60_000;

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({
    env: { APPROVAL_TIMER_SCALE: String(1 / 3600), REMIND_COOLDOWN_MINUTES: '0' },
  });
});
afterAll(() => h.close());

const eventsOf = async (documentId: string) =>
  (await h.service.database.db('document_events').where({ document_id: documentId }).orderBy('id')).map(
    (e: { event: string }) => e.event,
  );

/**
 * The approvers the workflow has asked for an action: the approval requests in the outbox (`whatsapp_messages`),
 * which the notification writes before it sends, whether it ran as an activity task or (patch `approval-lean-v2`)
 * as a local activity.
 */
async function requestedIn(documentId: string): Promise<string[]> {
  const rows = await h.service.database
    .db('whatsapp_messages')
    .where({ document_id: documentId, direction: 'out', kind: 'approval_request' })
    .select<{ approver_id: string }[]>('approver_id');
  return rows.map((r) => r.approver_id);
}

const remind = (approverId: string) =>
  h.service.request(`/approvers/${approverId}/remind`, { method: 'POST', account: h.account });

describe('signing groups', () => {
  it('order 1, 1, 2: both of the group at send, reminded; the next position only once both completed', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'Amal', phone: PHONES.saudiA, action_type: 'approve_only', order: 1 },
        { name: 'Badr', phone: PHONES.saudiB, action_type: 'sign', order: 1 },
        { name: 'Carol', phone: PHONES.uk, action_type: 'approve_only', order: 2 },
      ],
      // One automatic reminder an (scaled) hour after each approver's request.
      fields: { 'reminders[first_after_hours]': 1, 'reminders[every_hours]': 1, 'reminders[max]': 1 },
    });
    const [a, b, c] = doc.approvers;
    expect(doc.approvers.map((x) => x.order_index)).toEqual([1, 1, 2]);
    expect((await send(h, doc.id)).status).toBe(200);

    // Both members of the first group are asked at send.
    const requestA = await requestFor(h, PHONES.saudiA, doc.id, LONG);
    const requestB = await requestFor(h, PHONES.saudiB, doc.id, LONG);
    const status = await statusOf(h, doc.id);
    expect(status.current_approver_ids.toSorted()).toEqual([a!.id, b!.id].toSorted());

    // Reminders go to every member of the current group, automatic and by hand; none to the next position.
    for (const phone of [PHONES.saudiA, PHONES.saudiB]) {
      await eventually(
        async () => (await requestsFor(h, phone, doc.id)).some((r) => /remind/.test(templateNameOf(r))),
        LONG,
      );
    }
    // A manual remind while the automatic one still holds the approver's reminder lock is 429 by design (the
    // message is visible a moment before that send is recorded and the lock released): asked again after it.
    expect((await remindAsAClientWould(h, b!.id)).status).toBe(200);
    expect((await remind(c!.id)).status).toBe(409);

    // The first member completes: the next position still waits for the second.
    expect((await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(requestA)[0]! })).status).toBe(
      200,
    );
    const afterFirst = await statusOf(h, doc.id);
    expect(afterFirst.approvers.find((x) => x.id === a!.id)?.status).toBe('completed');
    expect(afterFirst.current_approver_ids).toEqual([b!.id]);
    expect(afterFirst.approvers.find((x) => x.id === c!.id)?.status).toBe('waiting');
    // The action's update returns once recorded, after the workflow task that would have asked Carol.
    expect((await requestedIn(doc.id)).toSorted()).toEqual([a!.id, b!.id].toSorted());
    expect((await remind(c!.id)).status).toBe(409);
    // Carol's page, from the embedding link: not usable yet, and acting on it is refused as out of turn.
    const link = await h.service.request(`/approvers/${c!.id}/link`, { account: h.account });
    const { url, usable_now } = ((await link.json()) as { data: { url: string; usable_now: boolean } }).data;
    expect(usable_now).toBe(false);
    const outOfTurn = await pagePost(h, url.split('/a/')[1]!, 'complete', {});
    expect(outOfTurn.status).toBe(409);

    // The second member completes on the page: now, and only now, the next position is asked.
    expect((await pagePost(h, linkTokenOf(requestB), 'complete', { typed_name: 'Badr' })).status).toBe(200);
    const requestC = await requestFor(h, PHONES.uk, doc.id, LONG);
    expect(await requestedIn(doc.id)).toContain(c!.id);
    expect((await statusOf(h, doc.id)).current_approver_ids).toEqual([c!.id]);
    expect((await tapButton(h, { from: PHONES.uk, payload: quickRepliesOf(requestC)[0]! })).status).toBe(200);

    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', LONG);
    expect(await eventsOf(doc.id)).toEqual([
      'document.created',
      'document.sent',
      'approver.notified',
      'approver.notified',
      'approver.completed',
      'approver.completed',
      'approver.notified',
      'approver.completed',
      'document.approved',
    ]);
  }, 180_000);
});
