import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  linkTokenOf,
  messagesTo,
  nthMessageTo,
  requestFor,
  requestsFor,
  pagePost,
  PHONES,
  quickRepliesOf,
  send,
  statusOf,
  tapButton,
  templateNameOf,
  TINY_PNG,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness();
});
afterAll(() => h.close());

const eventsOf = async (documentId: string) =>
  (await h.service.database.db('document_events').where({ document_id: documentId }).orderBy('id')).map(
    (e: { event: string }) => e.event,
  );

describe('sequential approval with all four action types', () => {
  it('notifies one approver at a time, in order, and ends approved', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'سارة المطيري', phone: PHONES.saudiA, action_type: 'sign', order: 1 },
        { name: 'Omar Stamp', phone: PHONES.saudiB, action_type: 'stamp', order: 2 },
        { name: 'Lina Approver', phone: PHONES.uk, action_type: 'approve_only', order: 3 },
        { name: 'Reviewer Rami', phone: PHONES.saudiC, action_type: 'review_only', order: 4 },
      ],
    });
    const [signer, stamper, approver, reviewer] = doc.approvers;

    const sent = await send(h, doc.id);
    expect(sent.status).toBe(200);
    expect(((await sent.json()) as { data: { status: string } }).data.status).toBe('pending'); // read after send
    expect((await statusOf(h, doc.id)).current_approver_ids).toEqual([signer!.id]);

    // Only the first approver hears about it; in Arabic for a Saudi number, with the link button only.
    const first = await eventually(() => messagesTo(h, PHONES.saudiA)[0]);
    expect((first.body as { template: { language: { code: string } } }).template.language.code).toBe('ar');
    expect(quickRepliesOf(first)).toEqual([]);
    expect(messagesTo(h, PHONES.saudiB)).toHaveLength(0);

    // 1. Sign on the approval page with a drawn signature.
    const signed = await pagePost(h, linkTokenOf(first), 'complete', { signature_png: TINY_PNG });
    expect(signed.status).toBe(200);
    let status = await statusOf(h, doc.id);
    expect(status.status).toBe('in_progress');
    expect(status.approvers.find((a) => a.id === signer!.id)).toMatchObject({
      status: 'completed',
      action_channel: 'page',
    });

    // 2. Stamp with the generated seal.
    const second = await eventually(() => messagesTo(h, PHONES.saudiB)[0]);
    expect(messagesTo(h, PHONES.uk)).toHaveLength(0);
    expect((await pagePost(h, linkTokenOf(second), 'complete', { generated_seal: true })).status).toBe(200);

    // 3. Approve with the WhatsApp quick reply; English for a UK number.
    const third = await eventually(() => messagesTo(h, PHONES.uk)[0]);
    expect((third.body as { template: { language: { code: string } } }).template.language.code).toBe('en');
    const [approve, reject] = quickRepliesOf(third);
    expect(approve).toMatch(/^approve:/);
    expect(reject).toMatch(/^reject:/);
    expect((await tapButton(h, { from: PHONES.uk, payload: approve! })).status).toBe(200);
    status = await statusOf(h, doc.id);
    expect(status.approvers.find((a) => a.id === approver!.id)).toMatchObject({
      status: 'completed',
      action_channel: 'whatsapp',
    });

    // 4. Review with the WhatsApp quick reply.
    const fourth = await eventually(() => messagesTo(h, PHONES.saudiC)[0]);
    expect(quickRepliesOf(fourth)[0]).toMatch(/^review:/);
    expect((await tapButton(h, { from: PHONES.saudiC, payload: quickRepliesOf(fourth)[0]! })).status).toBe(
      200,
    );

    status = await eventually(async () => {
      const s = await statusOf(h, doc.id);
      return s.status === 'approved' && s;
    });
    expect(status.progress).toEqual({ completed: 4, total: 4 });
    expect(await eventsOf(doc.id)).toEqual([
      'document.created',
      'document.sent',
      // Sequential: each approver's turn (approver.notified) comes after the previous one completed.
      'approver.notified',
      'approver.completed',
      'approver.notified',
      'approver.completed',
      'approver.notified',
      'approver.completed',
      'approver.notified',
      'approver.completed',
      'document.approved',
    ]);
    // Each approver was asked exactly once (the signed copy, sent once the document is approved, is not a request).
    const requests = (phone: string) =>
      messagesTo(h, phone).filter(
        (r) => (r.body as { template?: { name?: string } }).template?.name !== 'wathiq_signed_copy',
      );
    for (const phone of [PHONES.saudiA, PHONES.saudiB, PHONES.uk, PHONES.saudiC])
      expect(requests(phone)).toHaveLength(1);
    const evidence = await h.service.database
      .db('approvers')
      .where({ id: signer!.id })
      .first<Record<string, string>>();
    expect(evidence).toMatchObject({ action_channel: 'page', action_user_agent: 'WathiqTest/1.0 (iPhone)' });
    expect(evidence.action_ip).toMatch(/127\.0\.0\.1/);
    expect(evidence.signature_key).toMatch(/^approvals\//);
    expect(await h.service.database.db('approvers').where({ id: stamper!.id }).first()).toMatchObject({
      generated_seal: true,
    });
    expect(
      (
        await h.service.database
          .db('approvers')
          .where({ id: reviewer!.id })
          .first<{ action_message_id: string }>()
      ).action_message_id,
    ).toMatch(/^wamid\./);

    const handle = h.service.temporal.client.workflow.getHandle(`document-${doc.id}`);
    expect(((await handle.result()) as { status: string }).status).toBe('approved'); // the workflow ends right after the read model says so
    const wf = await handle.describe();
    expect(wf.status.name).toBe('COMPLETED');
    expect(wf.searchAttributes.DocumentStatus).toEqual(['approved']);
    expect(wf.searchAttributes.DocumentReference).toEqual([doc.reference]);
    expect(wf.searchAttributes.AccountId).toEqual([h.account.accountId]);
  });
});

describe('parallel approval', () => {
  it('notifies everyone at send and accepts actions in any order', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'sign' },
        { name: 'C', phone: PHONES.uk, action_type: 'review_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    // This document's request to each approver, found by its link: the other tests' documents message the same
    // numbers, and one of their signed copies may arrive meanwhile.
    const toA = await requestFor(h, PHONES.saudiA, doc.id);
    const toB = await requestFor(h, PHONES.saudiB, doc.id);
    const toUk = await requestFor(h, PHONES.uk, doc.id);
    for (const phone of [PHONES.saudiA, PHONES.saudiB, PHONES.uk])
      expect(await requestsFor(h, phone, doc.id)).toHaveLength(1);
    expect((await tapButton(h, { from: PHONES.uk, payload: quickRepliesOf(toUk)[0]! })).status).toBe(200);
    expect((await pagePost(h, linkTokenOf(toB), 'complete', { typed_name: 'B. Signer' })).status).toBe(200);
    expect((await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(toA)[0]! })).status).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved');
  });
});

describe('ending early', () => {
  it('a rejection ends the document as rejected, with the reason kept', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'sign' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    await send(h, doc.id);
    const token = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    const toB = await requestFor(h, PHONES.saudiB, doc.id);
    // Both notices recorded before the rejection: the fake has B's request before the workflow records it, and
    // under load the record could otherwise come after the rejection's events.
    await eventually(
      async () => (await eventsOf(doc.id)).filter((e) => e === 'approver.notified').length === 2,
    );
    const rejected = await pagePost(h, token, 'reject', { reason: 'الأسعار غير صحيحة' });
    expect(rejected.status).toBe(200);
    const read = await h.service.request(`/documents/${doc.id}`, { account: h.account });
    const body = (await read.json()) as { data: { status: string; rejection_reason: string } };
    expect(body.data).toMatchObject({ status: 'rejected', rejection_reason: 'الأسعار غير صحيحة' });
    // The other approver's button no longer works, and the used link is gone.
    await tapButton(h, { from: PHONES.saudiB, payload: quickRepliesOf(toB)[0]! });
    expect((await statusOf(h, doc.id)).approvers.map((a) => a.status).sort()).toEqual([
      'notified',
      'rejected',
    ]);
    expect((await pagePost(h, token, 'complete', { typed_name: 'x' })).status).toBe(410);
    expect((await fetch(`${h.service.api.url}/a/${token}`)).status).toBe(410);
    expect(await eventsOf(doc.id)).toEqual([
      'document.created',
      'document.sent',
      'approver.notified',
      'approver.notified',
      'approver.rejected',
      'document.rejected',
    ]);
  });

  it('void ends the document and tells every approver already notified, and only them', async () => {
    // Numbers of their own: a signed copy of an earlier test's document, still on its way to a shared number, would
    // count as a message B should not have had, or come between A's request and the void notice.
    const [A, B] = ['966531238001', '966531238002'];
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: A, action_type: 'approve_only' },
        { name: 'B', phone: B, action_type: 'approve_only' },
      ],
    });
    const [sinceA, countB] = [messagesTo(h, A).length, messagesTo(h, B).length];
    await send(h, doc.id);
    const first = await requestFor(h, A, doc.id);
    await eventually(async () => (await statusOf(h, doc.id)).approvers[0]?.status === 'notified');
    const voided = await h.service.request(`/documents/${doc.id}/void`, {
      method: 'POST',
      account: h.account,
    });
    expect(voided.status).toBe(200);
    expect(((await voided.json()) as { data: { status: string } }).data.status).toBe('voided');
    const notice = await nthMessageTo(h, A, sinceA, 2);
    expect(templateNameOf(notice)).toMatch(/void/);
    expect(messagesTo(h, B)).toHaveLength(countB);
    const again = await h.service.request(`/documents/${doc.id}/void`, {
      method: 'POST',
      account: h.account,
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { message: string } }).error.message).toMatch(/voided/);
    expect((await pagePost(h, linkTokenOf(first), 'complete', {})).status).toBe(410);
  });

  it('expires when the deadline passes (a durable timer), and actions after it are refused', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    // The deadline input set seconds ahead, rather than a suite that waits days.
    await h.service.database
      .db('documents')
      .where({ id: doc.id })
      .update({ expires_at: new Date(Date.now() + 2500) });
    await send(h, doc.id);
    const message = await requestFor(h, PHONES.saudiA, doc.id);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'expired', 20_000);
    expect(await eventsOf(doc.id)).toEqual([
      'document.created',
      'document.sent',
      'approver.notified',
      'document.expired',
    ]);
    expect((await pagePost(h, linkTokenOf(message), 'complete', {})).status).toBe(410);
    // The search attribute is recorded when the workflow task completes, just after the read model's write (a local
    // activity of that task) commits: read it once the workflow has ended.
    const handle = h.service.temporal.client.workflow.getHandle(`document-${doc.id}`);
    expect(((await handle.result()) as { status: string }).status).toBe('expired');
    expect((await handle.describe()).searchAttributes.DocumentStatus).toEqual(['expired']);
  });
});

describe('send and remind rules', () => {
  it('send: 409 when not a draft or past its deadline, 422 without approvers', async () => {
    const empty = await createDocument(h, { workflowType: 'sequential', approvers: [] });
    const res = await send(h, empty.id);
    expect(res.status).toBe(422);
    expect(
      ((await res.json()) as { error: { details: Record<string, string[]> } }).error.details.approvers,
    ).toBeDefined();

    const late = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'sign' }],
    });
    await h.service.database
      .db('documents')
      .where({ id: late.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const expired = await send(h, late.id);
    expect(expired.status).toBe(409);
    expect(((await expired.json()) as { error: { message: string } }).error.message).toMatch(/expired/);

    await h.service.database
      .db('documents')
      .where({ id: late.id })
      .update({ expires_at: new Date(Date.now() + 86_400_000) });
    expect((await send(h, late.id)).status).toBe(200);
    const twice = await send(h, late.id);
    expect(twice.status).toBe(409);
    expect(((await twice.json()) as { error: { message: string } }).error.message).toMatch(
      /pending|in_progress/,
    );
  });

  it('remind: only a notified approver who has not acted', async () => {
    // Numbers of their own, so the count of A's messages holds only this document's.
    const [A_PHONE, B_PHONE] = ['966531238011', '966531238012'];
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: A_PHONE, action_type: 'approve_only' },
        { name: 'B', phone: B_PHONE, action_type: 'approve_only' },
      ],
    });
    await send(h, doc.id);
    await requestFor(h, A_PHONE, doc.id);
    const [a, b] = doc.approvers;
    await eventually(
      async () => (await statusOf(h, doc.id)).approvers.find((x) => x.id === a!.id)?.status === 'notified',
    );
    const waiting = await h.service.request(`/approvers/${b!.id}/remind`, {
      method: 'POST',
      account: h.account,
    });
    expect(waiting.status).toBe(409);

    const before = messagesTo(h, A_PHONE).length;
    expect(before).toBeGreaterThan(0);
    const reminded = await h.service.request(`/approvers/${a!.id}/remind`, {
      method: 'POST',
      account: h.account,
    });
    expect(reminded.status).toBe(200);
    const reminder = messagesTo(h, A_PHONE).at(-1)!;
    expect(messagesTo(h, A_PHONE)).toHaveLength(before + 1);
    expect(templateNameOf(reminder)).toMatch(/remind/);

    await tapButton(h, { from: A_PHONE, payload: quickRepliesOf(reminder)[0]! });
    const acted = await h.service.request(`/approvers/${a!.id}/remind`, {
      method: 'POST',
      account: h.account,
    });
    expect(acted.status).toBe(409);
    const stranger = await h.service.createAccount();
    expect(
      (await h.service.request(`/approvers/${b!.id}/remind`, { method: 'POST', account: stranger })).status,
    ).toBe(404);
  });
});
