import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalWorkflowId } from '../../src/features/approval/definitions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import type { RecordedRequest } from '../fakes/fake-graph-api.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  messagesTo,
  pagePost,
  PHONES,
  quickRepliesOf,
  requestFor,
  requestsFor,
  send,
  statusOf,
  tapButton,
  type ApproverSpec,
} from '../helpers/approval-flow.ts';
import {
  download,
  fetchPublic,
  startFinalPdfHarness,
  type DownloadBody,
  type FinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { historyText } from '../helpers/histories.ts';
import { pageCount, pageText } from '../helpers/pdf-tools.ts';

/**
 * Delegation end to end: the real service, Temporal and PostgreSQL, WhatsApp through the fake
 * Graph API, webhooks to a fake receiver.
 */
let h: FinalPdfHarness;
let receiver: WebhookReceiver;

const DELEGATE = { name: 'Thessaly Ornquist', phone: '+966 56 123 4569', digits: PHONES.saudiC };
const REASON = 'On leave until the 30th; Thessaly signs for the finance team';

interface Envelope {
  success: boolean;
  data?: Record<string, unknown>;
  error?: { code: number; message: string; details: Record<string, string[]> };
}

const pagePostRaw = async (token: string, rest: string, body: unknown, cookie?: string, lang = 'en') => {
  const res = await fetch(`${h.service.api.url}/a/${token}/${rest}?lang=${lang}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(cookie && { cookie }) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Envelope, res };
};

const otpCode = (r: RecordedRequest): string =>
  (
    r.body as { template: { components: { type: string; parameters: { text?: string }[] }[] } }
  ).template.components.find((c) => c.type === 'body')!.parameters[0]!.text!;
const otpMessagesTo = (phone: string) =>
  messagesTo(h, phone).filter(
    (r) => (r.body as { template?: { name?: string } }).template?.name === 'wathiq_otp',
  );

/** Passes the code step of a whatsapp_otp approver; returns the page's cookie. */
async function verify(token: string, phone: string): Promise<string> {
  const before = otpMessagesTo(phone).length;
  expect((await pagePostRaw(token, 'code', {})).status).toBe(200);
  const code = otpCode(await eventually(() => otpMessagesTo(phone)[before]));
  const verified = await pagePostRaw(token, 'code/verify', { code });
  expect(verified.status).toBe(200);
  return verified.res.headers.get('set-cookie')!.split(';')[0]!;
}

interface ApproverRow {
  id: string;
  status: string;
  order_index: number;
  action_type: string;
  verification: string;
  notify: boolean;
  phone: string;
  name_en: string;
  delegated_to_id: string | null;
  delegated_from_id: string | null;
  delegation_reason: string | null;
}
const approverRows = (documentId: string) =>
  h.service.database
    .db('approvers')
    .where({ document_id: documentId })
    .orderBy([{ column: 'order_index' }, { column: 'created_at' }])
    .select<ApproverRow[]>('*');

beforeAll(async () => {
  h = await startFinalPdfHarness({ env: { OTP_IP_PER_MINUTE: '1000', WEBHOOK_RETRY_SCALE: '0.001' } });
  receiver = await startWebhookReceiver();
  const res = await h.service.request('/webhooks', {
    method: 'POST',
    account: h.account,
    body: JSON.stringify({ url: receiver.url, events: ['approver.delegated', 'document.approved'] }),
  });
  const { data } = (await res.json()) as { data: { secret: string } };
  expect(res.status).toBe(201);
  receiver.setSecret(data.secret);
}, 60_000);
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

describe('allow_delegation on the document', () => {
  it('defaults to false, is set by multipart and JSON, and is refused when not a boolean', async () => {
    const plain = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Plain Approver', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    expect((plain as unknown as { allow_delegation: boolean }).allow_delegation).toBe(false);
    const put = (body: unknown) =>
      h.service.request(`/documents/${plain.id}`, {
        method: 'PUT',
        account: h.account,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const changed = await put({ allow_delegation: true });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as Envelope).data).toMatchObject({ allow_delegation: true });
    const refused = await put({ allow_delegation: 'yes' });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as Envelope).error!.details).toEqual({
      allow_delegation: ['allow_delegation must be true or false'],
    });
    const multipart = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'Plain Approver', phone: PHONES.saudiA, action_type: 'approve_only' }],
      fields: { allow_delegation: 'true' },
    });
    expect((multipart as unknown as { allow_delegation: boolean }).allow_delegation).toBe(true);
  });
});

const delegator: ApproverSpec & { verification: 'whatsapp_otp' } = {
  name: 'Orsolya Delegator',
  phone: PHONES.saudiA,
  action_type: 'approve_only',
  verification: 'whatsapp_otp',
};

describe('an approver delegates their step', () => {
  it('the delegate is notified, acts in the same place, and the certificate and webhook tell of it', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [delegator, { name: 'Second Signer', phone: PHONES.uk, action_type: 'sign' }],
      fields: { allow_delegation: 'true' },
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const [a, b] = doc.approvers;
    const token = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    const body = { name: DELEGATE.name, phone: DELEGATE.phone, reason: REASON };

    // Not verified yet: the code comes first.
    expect((await pagePostRaw(token, 'delegate', body)).status).toBe(403);
    const cookie = await verify(token, PHONES.saudiA);

    // Refusals in the envelope, in the page's language.
    const taken = await pagePostRaw(token, 'delegate', { ...body, phone: `+${PHONES.uk}` }, cookie);
    expect(taken.status).toBe(422);
    expect(taken.body.error!.details.phone).toEqual([
      'This number is already an approver of this document; choose someone else.',
    ]);
    const bad = await pagePostRaw(
      token,
      'delegate',
      { name: ' ', phone: '0501234567', reason: '' },
      cookie,
      'ar',
    );
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.error!.details).sort()).toEqual(['name', 'phone', 'reason']);
    expect(bad.body.error!.details.reason![0]).toBe('اذكر سبب التفويض.');
    const long = await pagePostRaw(token, 'delegate', { ...body, reason: 'x'.repeat(501) }, cookie);
    expect(long.status).toBe(422);
    expect(long.body.error!.details.reason).toEqual(['The reason must be at most 500 characters.']);

    const ok = await pagePostRaw(token, 'delegate', body, cookie);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toMatchObject({ delegated: true, completed: 0, total: 2 });
    // The link is spent, and the page is told so in its language.
    const spent = await pagePostRaw(token, 'delegate', body, cookie);
    expect(spent.status).toBe(410);
    expect(spent.body.error!.message).toBe('You delegated your step on this document to someone else.');
    const spentAr = await pagePostRaw(token, 'delegate', body, cookie, 'ar');
    expect(spentAr.body.error!.message).toBe('لقد فوّضت خطوتك في هذا المستند إلى شخص آخر.');
    expect((await pagePostRaw(token, 'complete', {}, cookie)).status).toBe(410);

    const rows = await approverRows(doc.id);
    const delegate = rows.find((r) => r.delegated_from_id === a!.id)!;
    expect(rows.find((r) => r.id === a!.id)).toMatchObject({
      status: 'delegated',
      delegated_to_id: delegate.id,
      delegation_reason: REASON,
    });
    expect(delegate).toMatchObject({
      name_en: DELEGATE.name,
      phone: DELEGATE.digits,
      order_index: 1,
      action_type: 'approve_only',
      verification: 'whatsapp_otp',
      notify: true,
    });
    const status = await statusOf(h, doc.id);
    expect(status.progress).toEqual({ completed: 0, total: 2 });
    expect(status.current_approver_ids).toEqual([delegate.id]);

    // The delegate gets the request on WhatsApp; their button reply is their own proof (approve_only).
    const request = await requestFor(h, DELEGATE.digits, doc.id, 60_000);
    expect((await tapButton(h, { from: DELEGATE.digits, payload: quickRepliesOf(request)[0]! })).status).toBe(
      200,
    );
    const second = await requestFor(h, PHONES.uk, doc.id, 60_000);
    expect((await pagePost(h, linkTokenOf(second), 'complete', { typed_name: 'Second Signer' })).status).toBe(
      200,
    );
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 90_000);
    expect((await approverRows(doc.id)).map((r) => [r.id === b!.id, r.status])).toEqual([
      [false, 'delegated'],
      [false, 'completed'],
      [true, 'completed'],
    ]);

    // The certificate: who delegated to whom, when and why, in both languages.
    const res = await download(h, doc.id);
    const { data } = (await res.json()) as DownloadBody;
    const file = path.join(h.dataDir, `delegated-${doc.id}.pdf`);
    await writeFile(file, Buffer.from(await (await fetchPublic(h, data.download_url)).arrayBuffer()));
    const text = Array.from({ length: pageCount(file) }, (_, i) => pageText(file, i + 1)).join('\n');
    for (const s of [
      DELEGATE.name,
      'Delegated by',
      'Orsolya Delegator',
      'Delegated at',
      'Reason for delegation',
      'سبب التفويض',
      'وقت التفويض',
      'On leave until the 30th',
    ])
      expect(text).toContain(s);
    expect(text).toContain('Approver 2 of 2'); // the one who delegated has no block of their own

    // The public verification page tells the delegation as the certificate does, in both languages.
    const got = await h.service.request(`/documents/${doc.id}`, { account: h.account });
    const verification = ((await got.json()) as { data: { verification_url: string } }).data.verification_url;
    const verifyPage = async (lang: string) => {
      const res = await fetch(`${h.service.api.url}/v/${verification.split('/').pop()!}?lang=${lang}`);
      expect(res.status).toBe(200);
      return (await res.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    };
    expect(await verifyPage('en')).toMatch(
      /Delegation Orsolya Delegator \( \+966 \S+4567 \) delegated to Thessaly Ornquist : On leave until the 30th; Thessaly signs for the finance team Delegated at: \d/,
    );
    expect(await verifyPage('ar')).toMatch(
      /التفويض Orsolya Delegator \( \+966 \S+4567 \) فوّض إلى Thessaly Ornquist : On leave until the 30th; Thessaly signs for the finance team وقت التفويض: \d/,
    );

    // The event, delivered with both ids.
    const delivered = await eventually(() =>
      receiver.requests
        .map(
          (r) =>
            JSON.parse(r.rawBody.toString('utf8')) as {
              event: string;
              data: { document: { id: string }; approver: ApproverRow; delegate: ApproverRow };
            },
        )
        .find((d) => d.event === 'approver.delegated' && d.data.document.id === doc.id),
    );
    expect(delivered.data.approver).toMatchObject({
      id: a!.id,
      status: 'delegated',
      delegated_to_id: delegate.id,
      delegation_reason: REASON,
    });
    expect(delivered.data.delegate).toMatchObject({ id: delegate.id, delegated_from_id: a!.id });

    // The workflow's history names the delegate by id only.
    const history = await historyText(h.service.temporal.client, approvalWorkflowId(doc.id));
    expect(history).toContain(delegate.id);
    for (const secret of [DELEGATE.name, DELEGATE.digits, 'On leave until'])
      expect(history).not.toContain(secret);
  }, 180_000);

  it('answers the approver who delegates without waiting for the delegate’s WhatsApp request', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [delegator],
      fields: { allow_delegation: 'true' },
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const token = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    const cookie = await verify(token, PHONES.saudiA);
    // WhatsApp takes five seconds to accept the delegate's approval request. The delegate has a number of its own
    // here, so no message of another test's document (a signed copy to the usual delegate) takes the slow answer.
    const slow = { ...DELEGATE, phone: '+966 53 123 5001', digits: '966531235001' };
    h.graph.scriptFor(slow.digits, { kind: 'delay', ms: 5_000 });
    const ok = await pagePostRaw(
      token,
      'delegate',
      { name: slow.name, phone: slow.phone, reason: REASON },
      cookie,
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toMatchObject({ delegated: true });
    // Answered while WhatsApp had not yet accepted the delegate's request (it may not even have been sent).
    const accepted = async () =>
      (await requestsFor(h, slow.digits, doc.id)).filter((r) => r.wamid !== undefined);
    expect(await accepted()).toEqual([]);
    // The request arrives all the same, once, and the delegate acts on it.
    const [request] = await eventually(
      async () => ((await accepted()).length ? accepted() : undefined),
      60_000,
    );
    expect(await requestsFor(h, slow.digits, doc.id)).toHaveLength(1);
    expect((await tapButton(h, { from: slow.digits, payload: quickRepliesOf(request!)[0]! })).status).toBe(
      200,
    );
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 90_000);
  }, 120_000);

  it('is refused when the document does not allow it, and out of turn', async () => {
    const closed = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'No Delegation', phone: PHONES.saudiB, action_type: 'approve_only' }],
    });
    await send(h, closed.id);
    const token = linkTokenOf(await requestFor(h, PHONES.saudiB, closed.id));
    const refused = await pagePostRaw(token, 'delegate', {
      name: DELEGATE.name,
      phone: DELEGATE.phone,
      reason: REASON,
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      success: false,
      error: { code: 409, message: 'This document does not allow delegation.' },
    });

    const open = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'First Approver', phone: PHONES.saudiB, action_type: 'approve_only' },
        { name: 'Later Approver', phone: PHONES.uk, action_type: 'approve_only' },
      ],
      fields: { allow_delegation: 'true' },
    });
    await send(h, open.id);
    await requestFor(h, PHONES.saudiB, open.id);
    const link = await h.service.request(`/approvers/${open.approvers[1]!.id}/link`, { account: h.account });
    const laterToken = new URL(((await link.json()) as { data: { url: string } }).data.url).pathname.split(
      '/',
    )[2]!;
    const early = await pagePostRaw(laterToken, 'delegate', {
      name: DELEGATE.name,
      phone: DELEGATE.phone,
      reason: REASON,
    });
    expect(early.status).toBe(409);
    // The workflow's refusal (not notified yet), worded for the page rather than in the API's English.
    expect(early.body.error!.message).toBe(
      'It is not your turn yet. You will get a WhatsApp message when it is.',
    );
    // Nothing of the refused delegations stays behind.
    const left = await h.service.database
      .db('approver_delegations')
      .whereIn('document_id', [closed.id, open.id])
      .count<{ count: string }[]>({ count: '*' });
    expect(Number(left[0]!.count)).toBe(0);
  }, 120_000);
});
