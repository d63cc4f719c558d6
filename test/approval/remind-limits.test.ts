import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  messagesTo,
  requestFor,
  PHONES,
  send,
  startFlowHarness,
  statusOf,
  templateNameOf,
  type CreatedDocument,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Reminder limits (REMIND_COOLDOWN_MINUTES, REMIND_MAX_PER_APPROVER) through the real API, workflow and
 * WhatsApp provider (the fake Graph API at the border). Time passing is played by moving the recorded reminders
 * back in `whatsapp_messages`, the record the limits are read from.
 */

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({ env: { REMIND_COOLDOWN_MINUTES: '60', REMIND_MAX_PER_APPROVER: '3' } });
});
afterAll(() => h.close());

interface ErrorBody {
  success: false;
  error: { code: number; message: string };
}

const remind = (approverId: string) =>
  h.service.request(`/approvers/${approverId}/remind`, { method: 'POST', account: h.account });

/** A parallel document whose two approvers (phones A and B) have both been notified. */
async function notifiedDocument(a = PHONES.saudiA, b = PHONES.saudiB): Promise<CreatedDocument> {
  const doc = await createDocument(h, {
    workflowType: 'parallel',
    approvers: [
      { name: 'A', phone: a, action_type: 'approve_only' },
      { name: 'B', phone: b, action_type: 'approve_only' },
    ],
  });
  expect((await send(h, doc.id)).status).toBe(200);
  await requestFor(h, a, doc.id);
  await requestFor(h, b, doc.id);
  await eventually(async () => (await statusOf(h, doc.id)).approvers.every((a) => a.status === 'notified'));
  return doc;
}

/** As if `minutes` had passed since every reminder recorded for the approver. */
async function timePasses(approverId: string, minutes: number): Promise<void> {
  await h.service.database.db.raw(
    `UPDATE whatsapp_messages SET created_at = created_at - make_interval(mins => ?)
      WHERE approver_id = ? AND kind = 'reminder'`,
    [minutes, approverId],
  );
}

describe('reminder limits', () => {
  it('refuses a second reminder within the cooldown (429 + Retry-After), then caps reminders per approver (409)', async () => {
    const doc = await notifiedDocument();
    const approver = doc.approvers[0]!;
    const before = messagesTo(h, PHONES.saudiA).length;

    const first = await remind(approver.id);
    expect(first.status).toBe(200);
    expect(messagesTo(h, PHONES.saudiA)).toHaveLength(before + 1);
    expect(templateNameOf(messagesTo(h, PHONES.saudiA).at(-1)!)).toMatch(/remind/);

    const second = await remind(approver.id);
    expect(second.status).toBe(429);
    const retryAfter = Number(second.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(60 * 59);
    expect(retryAfter).toBeLessThanOrEqual(60 * 60);
    const tooSoon = (await second.json()) as ErrorBody;
    expect(tooSoon).toMatchObject({ success: false, error: { code: 429 } });
    expect(tooSoon.error.message).toMatch(/at least 60 minutes apart/);
    expect(tooSoon.error.message).toMatch(/next is allowed at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00/);
    expect(messagesTo(h, PHONES.saudiA)).toHaveLength(before + 1);

    // 59 minutes later it is still too soon; an hour after the last reminder the next one goes.
    await timePasses(approver.id, 59);
    expect((await remind(approver.id)).status).toBe(429);
    await timePasses(approver.id, 1);
    expect((await remind(approver.id)).status).toBe(200);
    await timePasses(approver.id, 60);
    expect((await remind(approver.id)).status).toBe(200);
    expect(messagesTo(h, PHONES.saudiA)).toHaveLength(before + 3);

    // Three reminders is the cap (REMIND_MAX_PER_APPROVER=3): however long one waits, the fourth is refused.
    await timePasses(approver.id, 24 * 60);
    const capped = await remind(approver.id);
    expect(capped.status).toBe(409);
    expect(capped.headers.get('retry-after')).toBeNull();
    const cappedBody = (await capped.json()) as ErrorBody;
    expect(cappedBody.error.code).toBe(409);
    expect(cappedBody.error.message).toMatch(/reminded 3 times; at most 3 reminders/);
    expect(messagesTo(h, PHONES.saudiA)).toHaveLength(before + 3);

    // The limits are per approver: the other approver of the same document can still be reminded.
    expect((await remind(doc.approvers[1]!.id)).status).toBe(200);
  });

  it('lets at most one of several concurrent reminds through', async () => {
    // B has a number the test before does not remind: its last reminder cannot take the slow answer.
    const B = '966531234002';
    const doc = await notifiedDocument('966531234001', B);
    const approver = doc.approvers[1]!;
    const before = messagesTo(h, B).length;
    // The reminder that gets through is slow to send, so the others certainly arrive while it is in flight.
    h.graph.scriptFor(B, { kind: 'delay', ms: 1500 });

    const answers = await Promise.all(Array.from({ length: 6 }, () => remind(approver.id)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 429, 429, 429, 429, 429]);
    for (const refused of answers.filter((r) => r.status === 429)) {
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as ErrorBody).error.message).toMatch(/60 minutes apart/);
    }
    expect(messagesTo(h, B)).toHaveLength(before + 1);
    const recorded = await h.service.database
      .db('whatsapp_messages')
      .where({ approver_id: approver.id, kind: 'reminder' })
      .count<{ count: string }[]>('* as count');
    expect(Number(recorded[0]!.count)).toBe(1);
  });
});
