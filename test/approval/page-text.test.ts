import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { STRINGS } from '../../src/approval-page/strings.ts';
import { BIDI_WORST, expectIsolated } from '../helpers/bidi.ts';
import { FormClient } from '../helpers/dashboard.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  nthMessageTo,
  send,
  startFlowHarness,
  statusOf,
  type CreatedDocument,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * What approvers type on the approval page is held to the API's rule (no bidi embedding, override or isolate
 * controls: 422 naming the field, in the page's language, and nothing happens), and every page that shows what
 * someone typed — the approval page and the dashboard — puts each such value in a `<bdi>` of its own.
 */
const A = { phone: '966501110001', nameAr: 'سلمى العتيبي', nameEn: 'Salma Alotaibi' };
const DELEGATE = { phone: '966501110002', name: 'Yusuf ابن خالد' };
const TITLE = { ar: 'عقد توريد Acme ٢٠٢٦', en: 'Supply contract (Acme) 2026' };
const ROLE = { ar: 'مديرة المشتريات', en: 'Head of purchasing (KSA)' };
const CC_NAME = 'ليلى Finance';
const DELEGATION_REASON = 'On leave until Sunday — في إجازة';
const REJECTION = 'Clause 4 (السعر) is wrong';

let h: FlowHarness;
let doc: CreatedDocument;
let token: string;
beforeAll(async () => {
  h = await startFlowHarness();
  doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [{ name: A.nameEn, phone: A.phone, action_type: 'sign' }],
    fields: {
      title: undefined,
      title_ar: TITLE.ar,
      title_en: TITLE.en,
      allow_delegation: 'true',
    },
  });
  // The names and roles in both languages, and a cc recipient with a name.
  const put = await h.service.request(`/documents/${doc.id}`, {
    method: 'PUT',
    account: h.account,
    body: JSON.stringify({
      approvers: [
        {
          name_ar: A.nameAr,
          name_en: A.nameEn,
          role_ar: ROLE.ar,
          role_en: ROLE.en,
          phone: A.phone,
          action_type: 'sign',
        },
      ],
      cc: [{ phone: '966501110003', name: CC_NAME }],
    }),
  });
  expect(put.status, await put.clone().text()).toBe(200);
  expect((await send(h, doc.id)).status).toBe(200);
  token = linkTokenOf(await nthMessageTo(h, A.phone, 0));
  // WhatsApp has the request before the activity that sent it writes the approver notified.
  await eventually(async () => (await statusOf(h, doc.id)).approvers[0]?.status === 'notified', 30_000);
}, 120_000);
afterAll(() => h?.close());

const pagePost = (path: string, body: unknown, lang: 'en' | 'ar' = 'en') =>
  fetch(`${h.service.api.url}/a/${token}/${path}?lang=${lang}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function expectRefused(res: Response, field: string, lang: 'en' | 'ar' = 'en') {
  const text = await res.text();
  expect(res.status, text).toBe(422);
  expect((JSON.parse(text) as { error: { details: unknown } }).error.details).toEqual({
    [field]: [STRINGS[lang].errors.bidiControls],
  });
}

describe('the approval page refuses bidi controls in what the approver types', () => {
  it.each(BIDI_WORST)('%s: typed name, rejection reason, delegate name and reason', async (_, value) => {
    await expectRefused(await pagePost('complete', { typed_name: value }), 'typed_name');
    await expectRefused(await pagePost('complete', { typed_name: value }, 'ar'), 'typed_name', 'ar');
    await expectRefused(await pagePost('reject', { reason: value }), 'reason');
    const delegation = { name: DELEGATE.name, phone: DELEGATE.phone, reason: DELEGATION_REASON };
    await expectRefused(await pagePost('delegate', { ...delegation, name: value }), 'name');
    await expectRefused(await pagePost('delegate', { ...delegation, reason: value }), 'reason');
    const status = await statusOf(h, doc.id);
    expect(status.status).toBe('pending');
    expect(status.approvers.map((a) => a.status)).toEqual(['notified']);
  });
});

describe('pages put what people typed in <bdi>', () => {
  it('the approval page: title, name, role and account name, in both languages', async () => {
    const account = await accountsStore(h.service.database.db).findById(h.account.accountId);
    for (const [lang, values] of [
      ['en', [TITLE.en, A.nameEn, ROLE.en, account!.name]],
      ['ar', [TITLE.ar, A.nameAr, ROLE.ar, account!.name]],
    ] as const) {
      const res = await fetch(`${h.service.api.url}/a/${token}?lang=${lang}`);
      expect(res.status).toBe(200);
      expectIsolated(await res.text(), values);
    }
  });

  it('the dashboard: titles, names, roles, cc names, the delegate and the rejection reason', async () => {
    // The approver hands the step on; the delegate rejects with a reason.
    const delegated = await pagePost('delegate', {
      name: DELEGATE.name,
      phone: DELEGATE.phone,
      reason: DELEGATION_REASON,
    });
    expect(delegated.status, await delegated.clone().text()).toBe(200);
    const delegateToken = linkTokenOf(await nthMessageTo(h, DELEGATE.phone, 0));
    const rejected = await fetch(`${h.service.api.url}/a/${delegateToken}/reject`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: REJECTION }),
    });
    expect(rejected.status, await rejected.clone().text()).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'rejected');

    const account = await accountsStore(h.service.database.db).findById(h.account.accountId);
    const client = new FormClient(h.service.api.url);
    await client.signIn(account!.email, 'correct horse battery staple');
    const page = async (path: string) => {
      const res = await client.get(path);
      expect(res.status).toBe(200);
      return res.text();
    };
    expectIsolated(await page(`/admin/documents/${doc.id}?lang=en`), [
      TITLE.ar,
      TITLE.en,
      A.nameEn,
      ROLE.en,
      DELEGATE.name,
      CC_NAME,
      REJECTION,
    ]);
    expectIsolated(await page(`/admin/documents/${doc.id}?lang=ar`), [A.nameAr, ROLE.ar, DELEGATE.name]);
    expectIsolated(await page('/admin?lang=en'), [TITLE.en, account!.name]);
    expectIsolated(await page('/admin?lang=ar'), [TITLE.ar]);
    expectIsolated(await page('/admin/api'), ['test key']);
    await client.close();
  });
});
