import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { pageCount, pageText } from '../helpers/pdf-tools.ts';

/**
 * Verified approvers (issue 15 item 2) end to end: the real service, Temporal and PostgreSQL, WhatsApp through the
 * fake Graph API. Time is moved by editing the code's row (sent earlier, expired), never by waiting.
 */
let h: FinalPdfHarness;
beforeAll(async () => {
  h = await startFinalPdfHarness({ env: { OTP_IP_PER_MINUTE: '1000' } });
});
afterAll(() => h.close());

interface Envelope {
  success: boolean;
  data?: Record<string, unknown>;
  error?: { code: number; message: string; details: Record<string, string[]> };
}

const pageUrl = (token: string, rest: string) => `${h.service.api.url}/a/${token}/${rest}`;
const postCode = async (token: string, rest: 'code' | 'code/verify', body: unknown = {}) => {
  const res = await fetch(pageUrl(token, rest), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { res, body: (await res.json()) as Envelope };
};
const otpRow = (approverId: string) =>
  h.service.database.db('approver_otp_codes').where({ approver_id: approverId });

interface OtpComponent {
  type: string;
  sub_type?: string;
  index?: string;
  parameters: { type: string; text?: string }[];
}
/** The authentication template's code, checked to be in the body and in the copy-code (url) button. */
function codeOf(r: RecordedRequest): string {
  const t = (r.body as { template: { name: string; components: OtpComponent[] } }).template;
  expect(t.name).toBe('wathiq_otp');
  const body = t.components.find((c) => c.type === 'body')!;
  const button = t.components.find((c) => c.type === 'button')!;
  expect(button).toMatchObject({ sub_type: 'url', index: '0' });
  const code = body.parameters[0]!.text!;
  expect(code).toMatch(/^\d{6}$/);
  expect(button.parameters).toEqual([{ type: 'text', text: code }]);
  return code;
}
const otpMessagesTo = (phone: string) =>
  messagesTo(h, phone).filter(
    (r) => (r.body as { template?: { name?: string } }).template?.name === 'wathiq_otp',
  );

describe('verification on the API', () => {
  it('PUT /approvers/{id} changes it on a draft; an unknown method is a 422 naming the field', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Draft Approver', phone: PHONES.saudiC, action_type: 'sign' }],
    });
    const id = doc.approvers[0]!.id;
    const put = (body: unknown) =>
      h.service.request(`/approvers/${id}`, {
        method: 'PUT',
        account: h.account,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const changed = await put({ verification: 'whatsapp_otp' });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as Envelope).data).toMatchObject({ verification: 'whatsapp_otp' });
    const refused = await put({ verification: 'sms' });
    expect(refused.status).toBe(422);
    expect(Object.keys(((await refused.json()) as Envelope).error!.details)).toEqual(['verification']);
  });
});

describe('an approver who must enter a WhatsApp code', () => {
  let doc: Awaited<ReturnType<typeof createDocument>>;
  let signer: { id: string };
  let token: string;
  let approverB: { id: string; verification?: string };
  let cookie: string;

  beforeAll(async () => {
    // The account's default makes the approver who gives no verification a verified one.
    await h.service.database
      .db('accounts')
      .where({ id: h.account.accountId })
      .update({ default_verification: 'whatsapp_otp' });
    const approvers: (ApproverSpec & { verification?: 'none' | 'whatsapp_otp' })[] = [
      { name: 'Signer', phone: PHONES.saudiA, action_type: 'sign', verification: 'whatsapp_otp' },
      { name: 'Approver', phone: PHONES.saudiB, action_type: 'approve_only' },
      { name: 'Reviewer', phone: PHONES.uk, action_type: 'review_only', verification: 'none' },
    ];
    doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers,
    });
    signer = doc.approvers[0]!;
    approverB = doc.approvers[1]!;
    expect((await send(h, doc.id)).status).toBe(200);
    token = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
  }, 60_000);

  it('the API shows each approver’s verification, the account default filling the one not given', () => {
    expect(doc.approvers.map((a) => (a as { verification?: string }).verification)).toEqual([
      'whatsapp_otp',
      'whatsapp_otp',
      'none',
    ]);
  });

  it('without a code, complete and reject answer 403 in the envelope', async () => {
    for (const action of ['complete', 'reject'] as const) {
      const res = await pagePost(h, token, action, { typed_name: 'Signer' });
      const body = (await res.json()) as Envelope;
      expect(res.status).toBe(403);
      expect(body).toMatchObject({ success: false, error: { code: 403 } });
      expect(body.error!.message).toMatch(/code sent to their WhatsApp/);
    }
    // A forged cookie is no proof either.
    const forged = await pagePost(
      h,
      token,
      'complete',
      { typed_name: 'Signer' },
      {
        cookie: `wathiq_verified=${'A'.repeat(43)}`,
      },
    );
    expect(forged.status).toBe(403);
    // Nor is the document served before the code: neither the PDF nor its viewer on the page.
    const pdf = await fetch(pageUrl(token, 'document.pdf'));
    expect(pdf.status).toBe(403);
    expect(pdf.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await pdf.json()) as Envelope).error!.message).toMatch(/code sent to their WhatsApp/);
    const forgedPdf = await fetch(pageUrl(token, 'document.pdf'), {
      headers: { cookie: `wathiq_verified=${'A'.repeat(43)}` },
    });
    expect(forgedPdf.status).toBe(403);
    const page = await (await fetch(`${h.service.api.url}/a/${token}`)).text();
    // Before the code the page is the code step alone: no viewer, nothing of the document.
    expect(page).not.toContain('class="viewer"');
    expect(page).toContain('id="code-step"');
    const verifyFirst = await postCode(token, 'code/verify', { code: '123456' });
    expect(verifyFirst.res.status).toBe(409);
  });

  it('sends the code as an authentication template to the approver’s number; resends are limited', async () => {
    const before = otpMessagesTo(PHONES.saudiA).length;
    const sent = await postCode(token, 'code');
    expect(sent.res.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.data).toMatchObject({ sent: true });
    const message = otpMessagesTo(PHONES.saudiA)[before]!;
    codeOf(message);
    expect((message.body as { template: { language: { code: string } } }).template.language.code).toBe('ar');
    // The code is stored hashed, with its own salt.
    const row = (await otpRow(signer.id).first()) as { code_hash: string; salt: string };
    expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.code_hash).not.toContain(codeOf(message));
    expect(row.salt).toMatch(/^[0-9a-f]{32}$/);

    const again = await postCode(token, 'code');
    expect(again.res.status).toBe(429);
    expect(again.res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(again.body.error!.code).toBe(429);
    expect(otpMessagesTo(PHONES.saudiA)).toHaveLength(before + 1);

    // Five codes an hour: the sixth is refused even after the pause between two.
    await otpRow(signer.id).update({ sends_in_window: 5, last_sent_at: new Date(Date.now() - 61_000) });
    const sixth = await postCode(token, 'code');
    expect(sixth.res.status).toBe(429);
    expect(sixth.body.error!.message).toMatch(/At most 5 codes an hour/);
  });

  it('five wrong codes lock the code; an expired code is refused; a new right code lets the approver act', async () => {
    await otpRow(signer.id).update({ sends_in_window: 1, last_sent_at: new Date(Date.now() - 61_000) });
    const before = otpMessagesTo(PHONES.saudiA).length;
    expect((await postCode(token, 'code')).res.status).toBe(200);
    const code = codeOf(otpMessagesTo(PHONES.saudiA)[before]!);
    const wrong = code === '000000' ? '111111' : '000000';

    const malformed = await postCode(token, 'code/verify', { code: '12ab' });
    expect(malformed.res.status).toBe(422);
    for (let i = 1; i <= 4; i++) {
      const r = await postCode(token, 'code/verify', { code: wrong });
      expect(r.res.status).toBe(422);
      expect(r.body.error!.details.code![0]).toContain(`${5 - i} tr`);
    }
    const fifth = await postCode(token, 'code/verify', { code: wrong });
    expect(fifth.res.status).toBe(429);
    expect(fifth.body.error!.message).toMatch(/locked/);
    // Locked: even the right code is refused now.
    expect((await postCode(token, 'code/verify', { code })).res.status).toBe(429);

    // A new code, then expired before it is used.
    await otpRow(signer.id).update({ last_sent_at: new Date(Date.now() - 61_000) });
    expect((await postCode(token, 'code')).res.status).toBe(200);
    const second = codeOf(otpMessagesTo(PHONES.saudiA)[before + 1]!);
    await otpRow(signer.id).update({ expires_at: new Date(Date.now() - 1000) });
    const expired = await postCode(token, 'code/verify', { code: second });
    expect(expired.res.status).toBe(422);
    expect(expired.body.error!.details.code![0]).toMatch(/expired/);

    await otpRow(signer.id).update({ last_sent_at: new Date(Date.now() - 61_000) });
    expect((await postCode(token, 'code')).res.status).toBe(200);
    const third = codeOf(otpMessagesTo(PHONES.saudiA)[before + 2]!);
    const right = await postCode(token, 'code/verify', { code: third });
    expect(right.res.status, JSON.stringify(right.body)).toBe(200);
    const setCookie = right.res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(
      new RegExp(
        `^wathiq_verified=[A-Za-z0-9_-]{43}; Path=/a/${token}; Max-Age=1800; HttpOnly; SameSite=Strict; Secure$`,
      ),
    );
    cookie = setCookie.split(';')[0]!;
    // A code is used once.
    expect((await postCode(token, 'code/verify', { code: third })).res.status).toBe(409);

    // Verified: the PDF is served, and the page shows its viewer.
    const pdf = await fetch(pageUrl(token, 'document.pdf'), { headers: { cookie } });
    expect(pdf.status).toBe(200);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    const page = await (await fetch(`${h.service.api.url}/a/${token}`, { headers: { cookie } })).text();
    expect(page).toMatch(/<section class="viewer" aria-label="[^"]+">/);
    expect(page).not.toContain('id="code-step"');

    const acted = await pagePost(h, token, 'complete', { typed_name: 'Signer' }, { cookie });
    expect(acted.status, await acted.text()).toBe(200);
  });

  it('a button reply in the chat counts as verified; the certificate names each method in both languages', async () => {
    const b = await requestFor(h, PHONES.saudiB, doc.id);
    expect((await tapButton(h, { from: PHONES.saudiB, payload: quickRepliesOf(b)[0]! })).status).toBe(200);
    const c = await requestFor(h, PHONES.uk, doc.id);
    // An approver without verification reads the PDF with the link alone.
    expect((await fetch(pageUrl(linkTokenOf(c), 'document.pdf'))).status).toBe(200);
    expect((await pagePost(h, linkTokenOf(c), 'complete', {})).status).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 90_000);

    const approvers = await h.service.database
      .db<{ id: string; verified_by: string; document_id: string; order_index: number }>('approvers')
      .where({ document_id: doc.id })
      .orderBy('order_index');
    expect(approvers.map((a) => a.verified_by)).toEqual(['whatsapp_otp', 'whatsapp_reply', 'none']);
    expect(approverB.id).toBe(approvers[1]!.id);

    const res = await download(h, doc.id);
    const { data } = (await res.json()) as DownloadBody;
    const file = path.join(h.dataDir, `verified-${doc.id}.pdf`);
    await writeFile(file, Buffer.from(await (await fetchPublic(h, data.download_url)).arrayBuffer()));
    const text = Array.from({ length: pageCount(file) }, (_, i) => pageText(file, i + 1)).join('\n');
    expect(text).toContain('Verified by');
    expect(text).toContain('طريقة التحقق');
    for (const method of ['WhatsApp one-time code', 'WhatsApp reply', 'None']) expect(text).toContain(method);
  }, 120_000);
});
