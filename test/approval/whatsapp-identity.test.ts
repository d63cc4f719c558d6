import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  PHONES,
  quickRepliesOf,
  requestFor,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Meta's usernames. A user who adopts one may reply without the phone number; the reply then names
 * its sender by `contacts[].wa_id` and the business-scoped user id `contacts[].user_id` only. Those ids are stored
 * from the first reply matched by the phone, and a later reply carrying only them is matched to the approver.
 */
let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness();
}, 120_000);
afterAll(() => h.close());

const completed = async (documentId: string) =>
  (
    await h.service.database
      .db('document_events')
      .where({ document_id: documentId, event: 'approver.completed' })
  ).length;

async function sentTo(phone: string) {
  const doc = await createDocument(h, {
    workflowType: 'parallel',
    approvers: [{ name: 'Sara', phone, action_type: 'approve_only' }],
  });
  expect((await send(h, doc.id)).status).toBe(200);
  const approve = quickRepliesOf(await requestFor(h, phone, doc.id, 60_000))[0]!;
  expect(approve).toMatch(/^approve:/);
  return { doc, approve };
}

describe('a reply without the phone number', () => {
  it('is matched by the wa_id or business-scoped id stored from an earlier reply; unknown ids are ignored', async () => {
    const phone = PHONES.saudiA;
    // Distinct per run: several test databases share the fake's numbers but not these ids.
    const userId = `SA.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const waId = `55${String(Date.now()).slice(-11)}`;

    // First seen: a reply with the number, which also carries both ids.
    const first = await sentTo(phone);
    expect((await tapButton(h, { from: phone, waId, userId, payload: first.approve })).status).toBe(200);
    await eventually(async () => (await statusOf(h, first.doc.id)).progress.completed === 1, 60_000);
    const stored = await h.service.database
      .db('approvers')
      .where({ document_id: first.doc.id })
      .first<{ wa_id: string | null; whatsapp_user_id: string | null }>('wa_id', 'whatsapp_user_id');
    expect(stored).toEqual({ wa_id: waId, whatsapp_user_id: userId });

    // A later document: ids nobody has are ignored, as a stranger's number is.
    const second = await sentTo(phone);
    expect((await tapButton(h, { userId: 'SA.000000000000001', payload: second.approve })).status).toBe(200);
    expect((await tapButton(h, { waId: '5500000000001', payload: second.approve })).status).toBe(200);
    expect(await completed(second.doc.id)).toBe(0);

    // The stored business-scoped id alone (no `from`, no `wa_id`) is enough.
    expect((await tapButton(h, { userId, payload: second.approve })).status).toBe(200);
    await eventually(async () => (await statusOf(h, second.doc.id)).progress.completed === 1, 60_000);
    const action = await h.service.database
      .db('approvers')
      .where({ document_id: second.doc.id })
      .first<{ action_channel: string }>('action_channel');
    expect(action.action_channel).toBe('whatsapp');

    // So is the stored wa_id alone.
    const third = await sentTo(phone);
    expect((await tapButton(h, { waId, payload: third.approve })).status).toBe(200);
    await eventually(async () => (await statusOf(h, third.doc.id)).progress.completed === 1, 60_000);

    // The ids are bound to the number they were seen with: another approver's button is not theirs.
    const other = await sentTo(PHONES.saudiB);
    expect((await tapButton(h, { userId, payload: other.approve })).status).toBe(200);
    expect((await tapButton(h, { waId, payload: other.approve })).status).toBe(200);
    expect(await completed(other.doc.id)).toBe(0);
    expect((await statusOf(h, other.doc.id)).progress.completed).toBe(0);
  }, 240_000);

  it('is not written when the reply’s wa_id is the approver’s phone, which matches it already', async () => {
    const phone = PHONES.saudiB;
    const { doc, approve } = await sentTo(phone);
    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    h.service.database.db.on('query', listen);
    try {
      // Meta's usual reply: `from` and `contacts[].wa_id` are both the number.
      expect((await tapButton(h, { from: phone, waId: phone, payload: approve })).status).toBe(200);
      await eventually(async () => (await statusOf(h, doc.id)).progress.completed === 1, 60_000);
    } finally {
      h.service.database.db.off('query', listen);
    }
    expect(statements.filter((sql) => /^update "approvers" set "wa_id"/i.test(sql))).toEqual([]);
    const stored = await h.service.database
      .db('approvers')
      .where({ document_id: doc.id })
      .first<{ wa_id: string | null }>('wa_id');
    expect(stored.wa_id).toBeNull();
  }, 120_000);
});
