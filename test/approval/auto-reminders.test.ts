import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
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
 * Automatic reminders through the real API, workflow (durable timers) and WhatsApp provider
 * (the fake Graph API at the border). The timers are real: APPROVAL_TIMER_SCALE (tests only) makes an hour of a
 * document's schedule one second when it is sent. Where a test proves that no further reminder goes, it watches
 * for some scaled hours more than the schedule would need (an observation window, not a synchronization).
 */
const HOUR = 1000; // ms: one scaled hour
const SCALE = String(1 / 3600);
const LONG = 60_000;

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({
    env: { APPROVAL_TIMER_SCALE: SCALE, REMIND_MAX_PER_APPROVER: '3', REMIND_COOLDOWN_MINUTES: '0' },
  });
});
afterAll(() => h.close());

const reminders = (first: number, every: number, max: number) => ({
  'reminders[first_after_hours]': first,
  'reminders[every_hours]': every,
  'reminders[max]': max,
});

/** The reminders of `documentId` the fake Graph API received for `phone` (the first request is the approval request). */
const remindersTo = async (phone: string, documentId: string) =>
  (await requestsFor(h, phone, documentId)).slice(1).filter((r) => /remind/.test(templateNameOf(r)));

/** The reminders recorded on the approver (the rows REMIND_MAX_PER_APPROVER counts). */
const recorded = async (approverId: string) =>
  Number(
    (
      await h.service.database
        .db('whatsapp_messages')
        .where({ approver_id: approverId, direction: 'out', kind: 'reminder' })
        .count<{ count: string }[]>('* as count')
    )[0]!.count,
  );

const watch = (ms: number) => new Promise((r) => setTimeout(r, ms));

const approve = async (phone: string, documentId: string) => {
  const request = await requestFor(h, phone, documentId, LONG);
  expect((await tapButton(h, { from: phone, payload: quickRepliesOf(request)[0]! })).status).toBe(200);
};

describe('automatic reminders', () => {
  it('validates reminders on create and update (422 in the envelope), and shows them on the document', async () => {
    const create = (fields: Record<string, string | number>) =>
      createDocument(h, {
        workflowType: 'sequential',
        approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
        fields,
      });
    const doc = await create(reminders(1, 2, 3));
    const read = await h.service.request(`/documents/${doc.id}`, { account: h.account });
    expect(((await read.json()) as { data: { reminders: unknown } }).data.reminders).toEqual({
      first_after_hours: 1,
      every_hours: 2,
      max: 3,
    });

    const put = (body: unknown) =>
      h.service.request(`/documents/${doc.id}`, {
        method: 'PUT',
        account: h.account,
        body: JSON.stringify(body),
      });
    for (const hostile of [
      { first_after_hours: 0, every_hours: 1, max: 1 },
      { first_after_hours: 1.5, every_hours: 1, max: 1 },
      { first_after_hours: 1, every_hours: '1e3', max: 1 },
      { first_after_hours: 1, every_hours: 1, max: -1 },
      { first_after_hours: 1, every_hours: 1, max: 101 },
      { first_after_hours: 8_761, every_hours: 1, max: 1 },
      { first_after_hours: 1, every_hours: 1, max: 1, __extra: 1 },
      { first_after_hours: 1, every_hours: 1 },
      'every day',
      [1, 1, 1],
    ]) {
      const res = await put({ reminders: hostile });
      const body = (await res.json()) as { success: boolean; error: { code: number; details: object } };
      expect(res.status, JSON.stringify(hostile)).toBe(422);
      expect(body).toMatchObject({ success: false, error: { code: 422 } });
      expect(Object.keys(body.error.details).some((k) => k.startsWith('reminders'))).toBe(true);
    }
    const cleared = await put({ reminders: null });
    expect(cleared.status).toBe(200);
    expect(((await cleared.json()) as { data: { reminders: unknown } }).data.reminders).toBeNull();

    // Multipart: the same rules for reminders[field] parts.
    const form = new FormData();
    form.append('title', 'x');
    form.append('reminders[max]', '9999');
    form.append('reminders[first_after_hours]', 'soon');
    form.append('approvers[0][name]', 'A');
    form.append('approvers[0][phone]', PHONES.saudiA);
    form.append('approvers[0][action_type]', 'approve_only');
    form.append('file', new Blob([new Uint8Array([37, 80, 68, 70])], { type: 'application/pdf' }), 'a.pdf');
    const res = await h.service.request('/documents', { method: 'POST', account: h.account, body: form });
    expect(res.status).toBe(422);
    const details = ((await res.json()) as { error: { details: Record<string, string[]> } }).error.details;
    expect(details['reminders.max']).toBeDefined();
    expect(details['reminders.first_after_hours']).toBeDefined();
  });

  it('sends {first_after_hours:1, every_hours:1, max:2} exactly twice to the approver who has not acted, none after an action', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
      fields: reminders(1, 1, 2),
    });
    const [a, b] = doc.approvers;
    expect((await send(h, doc.id)).status).toBe(200);
    // B acts at once; whatever B had by then is all B ever gets.
    await approve(PHONES.saudiB, doc.id);
    const bAtAction = (await remindersTo(PHONES.saudiB, doc.id)).length;

    await eventually(async () => (await remindersTo(PHONES.saudiA, doc.id)).length >= 2, LONG);
    await watch(3 * HOUR);
    expect(await remindersTo(PHONES.saudiA, doc.id)).toHaveLength(2);
    expect(await recorded(a!.id)).toBe(2);
    expect(await remindersTo(PHONES.saudiB, doc.id)).toHaveLength(bAtAction);
    expect(await recorded(b!.id)).toBe(bAtAction);

    await approve(PHONES.saudiA, doc.id);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', LONG);
  }, 120_000);

  it('counts against REMIND_MAX_PER_APPROVER with manual reminders: one beyond it is not sent', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'A', phone: PHONES.saudiC, action_type: 'approve_only' }],
      fields: reminders(2, 1, 3),
    });
    const a = doc.approvers[0]!;
    expect((await send(h, doc.id)).status).toBe(200);
    await requestFor(h, PHONES.saudiC, doc.id, LONG);
    await eventually(async () => (await statusOf(h, doc.id)).approvers[0]?.status === 'notified', LONG);
    for (let i = 0; i < 2; i++) expect((await remindAsAClientWould(h, a.id)).status).toBe(200);
    // Automatic ones at 2, 3 and 4 scaled hours: only the first fits under the cap of 3.
    await eventually(async () => (await recorded(a.id)) >= 3, LONG);
    await watch(5 * HOUR);
    expect(await recorded(a.id)).toBe(3);
    expect(await remindersTo(PHONES.saudiC, doc.id)).toHaveLength(3);
    const res = await h.service.request(`/approvers/${a.id}/remind`, { method: 'POST', account: h.account });
    expect(res.status).toBe(409);
  }, 120_000);

  it('a void stops them', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
      fields: reminders(1, 3, 3),
    });
    const a = doc.approvers[0]!;
    expect((await send(h, doc.id)).status).toBe(200);
    await eventually(async () => (await remindersTo(PHONES.saudiA, doc.id)).length >= 1, LONG);
    const voided = await h.service.request(`/documents/${doc.id}/void`, {
      method: 'POST',
      account: h.account,
    });
    expect(voided.status).toBe(200);
    const atVoid = await recorded(a.id);
    await watch(5 * HOUR);
    expect(await recorded(a.id)).toBe(atVoid);
    expect(await remindersTo(PHONES.saudiA, doc.id)).toHaveLength(atVoid);
  }, 120_000);

  it('sends the "expires tomorrow" reminder once, 24 (scaled) hours before the deadline', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'A', phone: PHONES.saudiB, action_type: 'approve_only' }],
      // The regular ones would start 100 scaled hours after the notification: after the deadline.
      fields: reminders(100, 100, 2),
    });
    const a = doc.approvers[0]!;
    // A deadline 30 scaled hours away: the expiry reminder is due 6 scaled hours after the send.
    await h.service.database
      .db('documents')
      .where({ id: doc.id })
      .update({ expires_at: new Date(Date.now() + 30 * HOUR) });
    expect((await send(h, doc.id)).status).toBe(200);
    await eventually(async () => (await remindersTo(PHONES.saudiB, doc.id)).length >= 1, LONG);
    await watch(3 * HOUR);
    expect(await remindersTo(PHONES.saudiB, doc.id)).toHaveLength(1);
    expect(await recorded(a.id)).toBe(1);
    const voided = await h.service.request(`/documents/${doc.id}/void`, {
      method: 'POST',
      account: h.account,
    });
    expect(voided.status).toBe(200);
  }, 120_000);
});
