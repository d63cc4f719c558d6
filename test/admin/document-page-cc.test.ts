import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDocument, PHONES, startFlowHarness, type FlowHarness } from '../helpers/approval-flow.ts';
import { FormClient } from '../helpers/dashboard.ts';

/**
 * The dashboard's document page lists the document's cc recipients: who gets the
 * signed PDF besides the approvers, in Arabic and English. Over plain HTTP, signed in as the account's holder.
 */
let h: FlowHarness;
let client: FormClient;

beforeAll(async () => {
  h = await startFlowHarness({ worker: false });
  const { email } = await h.service.database
    .db('accounts')
    .where({ id: h.account.accountId })
    .first<{ email: string }>('email');
  client = new FormClient(h.service.api.url.replace('localhost', '127.0.0.1'));
  // The password test accounts are made with (test/helpers/test-service.ts).
  await client.signIn(email, 'correct horse battery staple');
}, 120_000);
afterAll(async () => {
  await client?.close();
  await h?.close();
});

const approvers = [{ name: 'Only Approver', phone: PHONES.saudiA, action_type: 'approve_only' as const }];

it('shows each cc recipient: number, name and language, in English and in Arabic', async () => {
  const doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers,
    fields: {
      cc: JSON.stringify([
        { phone: PHONES.uk, name: 'Legal <Archive>', language: 'en' },
        { phone: PHONES.saudiC },
      ]),
    },
  });
  const en = await client.get(`/admin/documents/${doc.id}?lang=en`);
  expect(en.status).toBe(200);
  const page = await en.text();
  expect(page).toContain('Copies (cc)');
  const table = /<table id="cc-recipients">[\s\S]*?<\/table>/.exec(page)?.[0] ?? '';
  const rows = [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1).map((m) =>
    m[1]!
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  );
  expect(rows).toEqual([
    `+${PHONES.uk} Legal &lt;Archive&gt; English`,
    `+${PHONES.saudiC} — Automatic (by number)`,
  ]);

  const ar = await (await client.get(`/admin/documents/${doc.id}?lang=ar`)).text();
  expect(ar).toContain('نسخ لعلم (cc)');
  expect(ar).toContain(`<span dir="ltr">+${PHONES.saudiC}</span>`);
  expect(ar).toContain('تلقائية (حسب الرقم)');
  expect(ar).toContain('الإنجليزية');
});

it('says so when a document has no cc recipient', async () => {
  const doc = await createDocument(h, { workflowType: 'sequential', approvers });
  const page = await (await client.get(`/admin/documents/${doc.id}?lang=en`)).text();
  expect(page).toContain('No copies: only the approvers receive the signed PDF.');
  expect(page).not.toContain('id="cc-recipients"');
});
