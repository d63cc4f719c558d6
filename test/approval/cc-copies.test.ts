import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/fake-graph-api.ts';
import {
  createDocument,
  eventually,
  messagesTo,
  PHONES,
  quickRepliesOf,
  remindAsAClientWould,
  requestFor,
  requestsFor,
  send,
  statusOf,
  tapButton,
  templateNameOf,
  type ApproverSpec,
} from '../helpers/approval-flow.ts';
import {
  download,
  fetchPublic,
  startFinalPdfHarness,
  type DownloadBody,
  type FinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { makePdf } from '../helpers/pdf.ts';
import { pageCount, pageText } from '../helpers/pdf-tools.ts';

/**
 * Automatic reminders, verified approvers and copies to others, end to end (real service, Temporal and PostgreSQL, WhatsApp through
 * the fake Graph API): the account's defaults set through GET/PUT /account/settings and taken by a document that
 * gives none; `cc` recipients who get the signed copy as the approvers do, in their language; and the reminders on
 * the audit certificate. APPROVAL_TIMER_SCALE (tests only) makes a scheduled hour one second.
 */
let h: FinalPdfHarness;
beforeAll(async () => {
  h = await startFinalPdfHarness({
    env: { APPROVAL_TIMER_SCALE: String(1 / 3600), REMIND_COOLDOWN_MINUTES: '0' },
  });
}, 120_000);
afterAll(() => h.close());

interface Envelope<T = Record<string, unknown>> {
  success: boolean;
  data?: T;
  error?: { code: number; message: string; details: Record<string, string[]> };
}
interface Settings {
  embed_origins: string[];
  default_reminders: { first_after_hours: number; every_hours: number; max: number } | null;
  default_verification: string;
}

const api = async <T = Record<string, unknown>>(p: string, method = 'GET', body?: unknown) => {
  const res = await h.service.request(p, {
    method,
    account: h.account,
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  });
  return { status: res.status, body: (await res.json()) as Envelope<T> };
};
const settings = (body?: unknown) =>
  api<Settings>('/account/settings', body === undefined ? 'GET' : 'PUT', body);

const CC_SAUDI = PHONES.saudiC;
const CC_UK = '447911123457';
const APPROVERS: (ApproverSpec & { verification?: string })[] = [
  { name: 'Sara', phone: PHONES.saudiA, action_type: 'approve_only' },
  { name: 'Tom', phone: PHONES.uk, action_type: 'approve_only', verification: 'none' },
];

describe('account defaults through the API', () => {
  it('GET/PUT /account/settings show and change default_reminders and default_verification, partially and validated', async () => {
    expect((await settings()).body.data).toEqual({
      embed_origins: [],
      default_reminders: null,
      default_verification: 'none',
    });
    expect((await settings({ embed_origins: ['https://app.example.com'] })).status).toBe(200);
    // Only what is given changes.
    const reminders = { first_after_hours: 1, every_hours: 1, max: 1 };
    const set = await settings({ default_reminders: reminders });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({
      embed_origins: ['https://app.example.com'],
      default_reminders: reminders,
      default_verification: 'none',
    });
    expect((await settings({ default_verification: 'whatsapp_otp' })).body.data).toMatchObject({
      embed_origins: ['https://app.example.com'],
      default_reminders: reminders,
      default_verification: 'whatsapp_otp',
    });

    for (const [body, field] of [
      [
        { default_reminders: { first_after_hours: 0, every_hours: 1, max: 1 } },
        'default_reminders.first_after_hours',
      ],
      [
        { default_reminders: { first_after_hours: 1, every_hours: 1, max: 1, extra: 1 } },
        'default_reminders',
      ],
      [{ default_reminders: { first_after_hours: 1 } }, 'default_reminders.every_hours'],
      [{ default_reminders: 'daily' }, 'default_reminders'],
      [{ default_verification: 'sms' }, 'default_verification'],
    ] as const) {
      const refused = await settings(body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body.success).toBe(false);
      expect(Object.keys(refused.body.error!.details), JSON.stringify(body)).toContain(field);
    }
    expect((await settings()).body.data).toEqual({
      embed_origins: ['https://app.example.com'],
      default_reminders: reminders,
      default_verification: 'whatsapp_otp',
    });
    // null clears the reminders back to the server's default; then set again for the flow below.
    expect((await settings({ default_reminders: null })).body.data!.default_reminders).toBeNull();
    expect((await settings({ default_reminders: reminders })).status).toBe(200);
  });
});

describe('cc recipients', () => {
  const create = async (cc: unknown) => {
    const form = new FormData();
    form.append('title', 'Copies');
    form.append('approvers', JSON.stringify(APPROVERS));
    form.append('cc', JSON.stringify(cc));
    form.append(
      'file',
      new Blob([Buffer.from(await makePdf(1, 'Copies'))], { type: 'application/pdf' }),
      'c.pdf',
    );
    return h.service.request('/documents', { method: 'POST', account: h.account, body: form });
  };

  it('are validated on create and update: normalized, at most 10; a number kept once, an approver’s dropped', async () => {
    for (const [cc, field] of [
      [[{ phone: '12' }], 'cc.0.phone'],
      [[{ language: 'en' }], 'cc.0.phone'],
      [[{ phone: CC_UK, language: 'fr' }], 'cc.0.language'],
      [[{ phone: CC_UK, email: 'x@example.com' }], 'cc.0'],
      [Array.from({ length: 11 }, (_, i) => ({ phone: `9665012345${String(i).padStart(2, '0')}` })), 'cc'],
      ['966561234569', 'cc'],
    ] as const) {
      const res = await create(cc);
      const body = (await res.json()) as Envelope;
      expect(res.status, JSON.stringify(cc)).toBe(422);
      expect(Object.keys(body.error!.details), JSON.stringify(body.error)).toContain(field);
    }

    // The same number twice is kept once, as first given; an approver's number is no cc (they get their own copy).
    const res = await create([
      { phone: '+966 56 123 4569', name: 'ليلى' },
      { phone: PHONES.saudiA, language: 'en' },
      { phone: `00${CC_SAUDI}`, language: 'en', name: 'Someone else' },
    ]);
    const created = (await res.json()) as Envelope<{ id: string; cc: unknown }>;
    expect(res.status, JSON.stringify(created)).toBe(201);
    expect(created.data!.cc).toEqual([{ phone: CC_SAUDI, language: null, name: 'ليلى' }]);
    const id = created.data!.id;

    // Update: cc replaces the list, kept against the approvers the document will have.
    const changed = await api<{ cc: unknown }>(`/documents/${id}`, 'PUT', {
      cc: [{ phone: '00 44 7911 123457', language: 'en' }, { phone: PHONES.uk }, { phone: CC_SAUDI }],
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data!.cc).toEqual([
      { phone: CC_UK, language: 'en', name: null },
      { phone: CC_SAUDI, language: null, name: null },
    ]);
    const replaced = await api<{ cc: unknown }>(`/documents/${id}`, 'PUT', {
      approvers: [{ name: 'Layla', phone: CC_SAUDI, action_type: 'approve_only' }],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data!.cc).toEqual([{ phone: CC_UK, language: 'en', name: null }]);
    expect((await api<{ cc: unknown }>(`/documents/${id}`)).body.data!.cc).toEqual([
      { phone: CC_UK, language: 'en', name: null },
    ]);
    expect((await api<{ cc: unknown }>(`/documents/${id}`, 'PUT', { cc: [] })).body.data!.cc).toEqual([]);
  });

  it('are taken as cc[N][field] parts too, as the approvers are; an error names the part', async () => {
    const form = async (parts: [string, string][]) => {
      const body = new FormData();
      body.append('title', 'Copies by parts');
      body.append('approvers', JSON.stringify(APPROVERS));
      for (const [name, value] of parts) body.append(name, value);
      body.append(
        'file',
        new Blob([Buffer.from(await makePdf(1, 'Copies'))], { type: 'application/pdf' }),
        'c.pdf',
      );
      return h.service.request('/documents', { method: 'POST', account: h.account, body });
    };
    const res = await form([
      ['cc[0][phone]', '+966 56 123 4569'],
      ['cc[0][name]', 'ليلى'],
      ['cc[1][phone]', '00 44 7911 123457'],
      ['cc[1][language]', 'en'],
    ]);
    const created = (await res.json()) as Envelope<{ cc: unknown }>;
    expect(res.status, JSON.stringify(created)).toBe(201);
    expect(created.data!.cc).toEqual([
      { phone: CC_SAUDI, language: null, name: 'ليلى' },
      { phone: CC_UK, language: 'en', name: null },
    ]);

    const refused = await form([['cc[0][phone]', '12']]);
    expect(refused.status).toBe(422);
    expect(Object.keys(((await refused.json()) as Envelope).error!.details)).toContain('cc.0.phone');
  });
});

interface HeaderDocument {
  link: string;
  filename: string;
}
interface TemplateBody {
  template: {
    name: string;
    language: { code: string };
    components: { type: string; parameters: { type: string; text?: string; document?: HeaderDocument }[] }[];
  };
}
const template = (r: RecordedRequest) => (r.body as TemplateBody).template;
const headerDocument = (r: RecordedRequest) =>
  template(r).components.find((c) => c.type === 'header')?.parameters[0]?.document;
const greeting = (r: RecordedRequest) =>
  template(r).components.find((c) => c.type === 'body')!.parameters[0]!.text;

describe('a document created without its own reminders and verification, with cc recipients', () => {
  it('takes the account defaults, records every reminder on the certificate, and sends cc the signed copy in their language', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: APPROVERS,
      fields: {
        // Far enough that the "expires tomorrow" reminder (24 scaled hours before it) never comes into the test.
        expires_in_days: 30,
        cc: JSON.stringify([
          { phone: '+966 56 123 4569', name: 'ليلى' },
          { phone: CC_UK, language: 'en' },
        ]),
      },
    });
    const read = await api<{
      reminders: unknown;
      cc: unknown;
      approvers: { id: string; verification: string }[];
    }>(`/documents/${doc.id}`);
    // Its own values are absent: the account's apply (verification when the approver is added, reminders when sent).
    expect(read.body.data!.reminders).toBeNull();
    expect(read.body.data!.approvers.map((a) => a.verification)).toEqual(['whatsapp_otp', 'none']);
    expect(read.body.data!.cc).toEqual([
      { phone: CC_SAUDI, language: null, name: 'ليلى' },
      { phone: CC_UK, language: 'en', name: null },
    ]);

    // A cc number that is also an approver's (an approver added or changed after cc was set) gets one copy.
    await h.service.database.db.raw(`UPDATE documents SET cc = cc || ?::jsonb WHERE id = ?`, [
      JSON.stringify([{ phone: PHONES.uk, language: null, name: null }]),
      doc.id,
    ]);
    expect((await send(h, doc.id)).status).toBe(200);
    // The account's {first_after_hours: 1, every_hours: 1, max: 1}: one automatic reminder each, a scaled hour on.
    const reminded = async (phone: string) =>
      (await requestsFor(h, phone, doc.id)).filter((r) => /remind/.test(templateNameOf(r)));
    for (const phone of [PHONES.saudiA, PHONES.uk])
      await eventually(async () => (await reminded(phone)).length === 1, 60_000);
    // And one manual reminder to Sara.
    // Sara's automatic reminder may still hold her reminder lock after its message reached the fake (429, retried).
    const manual = await remindAsAClientWould(h, doc.approvers[0]!.id);
    expect(manual.status, await manual.text()).toBe(200);
    await eventually(async () => (await reminded(PHONES.saudiA)).length === 2, 30_000);

    for (const phone of [PHONES.saudiA, PHONES.uk]) {
      const request = await requestFor(h, phone, doc.id);
      expect((await tapButton(h, { from: phone, payload: quickRepliesOf(request)[0]! })).status).toBe(200);
    }
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 120_000);
    await h.service.temporal.client.workflow.getHandle(`document-${doc.id}`).result();

    const { data } = (await (await download(h, doc.id)).json()) as DownloadBody;
    const link = data.download_url;
    const copiesTo = (phone: string) =>
      messagesTo(h, phone).filter(
        (r) => templateNameOf(r) === 'wathiq_signed_copy' && headerDocument(r)?.link === link,
      );
    for (const [phone, language, name] of [
      [CC_SAUDI, 'ar', 'ليلى'],
      [CC_UK, 'en', 'there'],
      [PHONES.saudiA, 'ar', 'Sara'],
      [PHONES.uk, 'en', 'Tom'],
    ] as const) {
      const copies = copiesTo(phone);
      expect(copies, phone).toHaveLength(1);
      expect(headerDocument(copies[0]!)).toEqual({ link, filename: `${doc.reference}.pdf` });
      expect(template(copies[0]!).language.code).toBe(language);
      expect(greeting(copies[0]!)).toBe(name);
    }
    const rows = await h.service.database
      .db('whatsapp_messages')
      .where({ document_id: doc.id, direction: 'out', kind: 'signed_copy' })
      .select('approver_id', 'phone', 'wamid');
    expect(rows).toHaveLength(4);
    expect(
      rows
        .filter((r: { approver_id: string | null }) => r.approver_id === null)
        .map((r: { phone: string }) => r.phone)
        .sort(),
    ).toEqual([CC_UK, CC_SAUDI].sort());
    expect(rows.every((r: { wamid: string | null }) => typeof r.wamid === 'string')).toBe(true);

    // The certificate lists each approver's reminders: Sara an automatic and a manual one, Tom an automatic one.
    const file = path.join(h.dataDir, `cc-${doc.id}.pdf`);
    await writeFile(file, Buffer.from(await (await fetchPublic(h, link)).arrayBuffer()));
    const text = Array.from({ length: pageCount(file) }, (_, i) => pageText(file, i + 1)).join('\n');
    expect(text).toContain('Reminders sent');
    expect(text).toContain('التذكيرات المرسلة');
    expect(text.match(/— automatic reminder/g)).toHaveLength(2);
    expect(text.match(/— manual reminder/g)).toHaveLength(1);
    expect(text).toContain('تذكير يدوي');
  }, 300_000);
});
