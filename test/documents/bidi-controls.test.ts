import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountWithKey } from '../../src/features/accounts/create-account.ts';
import { apiKeysStore } from '../../src/features/accounts/api-keys-store.ts';
import { bidiControlMessage } from '../../src/domain/bidi.ts';
import { isAppError } from '../../src/errors.ts';
import { BIDI_WORST } from '../helpers/bidi.ts';
import { createDashboardAccount, FormClient } from '../helpers/dashboard.ts';
import { documentForm, type FormValue } from '../helpers/multipart.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  approverOf,
  createDraft,
  documentOf,
  expectValidation,
  json,
  PHONE_A,
  PHONE_B,
  startDocumentsService,
  type DocumentsService,
} from './support.ts';

/**
 * Text a person reads cannot carry the controls that would make it read otherwise: every bidi embedding, override
 * and isolate character (U+202A–U+202E, U+2066–U+2069) is a 422 naming the field, in every text field of every
 * way in (multipart create, JSON and multipart update, approver add and update, cc, account and key names), while
 * the marks Arabic text uses (LRM, RLM, ALM) are kept exactly as given.
 */
const WORST = BIDI_WORST;
/** Every control is in at least one worst value. */
const CONTROLS = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
/** The marks are allowed: Arabic and mixed text uses them to place digits and punctuation. */
const MARKED_AR = 'عقد عمل\u200F (2026)';
const MARKED_EN = 'Contract \u200E(عقد)\u061C.';

let service: DocumentsService;
let account: TestAccount;
let pdf: Uint8Array;
beforeAll(async () => {
  service = await startDocumentsService();
  account = await service.createAccount({ plan: 'enterprise' });
  pdf = await makePdf(1);
});
afterAll(() => service?.close());

const only = (field: string) => ({ [field]: [bidiControlMessage(field.split('.').pop()!)] });

function create(
  fields: Record<string, FormValue>,
  approver: Record<string, FormValue> = {},
  ccName?: string,
) {
  const form = documentForm(
    { title_ar: 'عقد', title_en: 'Contract', ...fields },
    { approvers: [{ name: 'Ali', phone: PHONE_A, ...approver }], file: pdf },
  );
  form.append('cc[0][phone]', PHONE_B);
  if (ccName !== undefined) form.append('cc[0][name]', ccName);
  return service.request('/documents', { method: 'POST', account, body: form });
}

it('covers every embedding, override and isolate control', () => {
  const used = new Set(WORST.flatMap(([, v]) => [...v].map((c) => c.codePointAt(0)!)));
  for (const c of CONTROLS) expect(used.has(c), c.toString(16)).toBe(true);
});

describe.each(WORST)('%s', (_, value) => {
  it('is refused in every text field of a multipart create', async () => {
    const stored = await service.storedFiles();
    for (const field of ['title', 'title_ar', 'title_en'])
      await expectValidation(await create({ [field]: value }), only(field));
    for (const field of ['name', 'name_ar', 'name_en', 'role_ar', 'role_en']) {
      const approver = field.startsWith('name_') ? { name: undefined, name_ar: 'علي', name_en: 'Ali' } : {};
      await expectValidation(await create({}, { ...approver, [field]: value }), only(`approvers.0.${field}`));
    }
    await expectValidation(await create({}, {}, value), only('cc.0.name'));
    expect(await service.storedFiles()).toEqual(stored);
  });

  it('is refused by a JSON update, a multipart update and the approver routes, and changes nothing', async () => {
    const draft = await createDraft(service, account);
    const put = (body: unknown) =>
      service.request(`/documents/${draft.id}`, { method: 'PUT', account, ...json(body) });
    for (const field of ['title', 'title_ar', 'title_en'])
      await expectValidation(await put({ [field]: value }), only(field));
    await expectValidation(
      await put({ approvers: [{ name: value, phone: PHONE_A }] }),
      only('approvers.0.name'),
    );
    await expectValidation(await put({ cc: [{ phone: PHONE_B, name: value }] }), only('cc.0.name'));
    const multipart = documentForm({ title: value }, { file: pdf });
    await expectValidation(
      await service.request(`/documents/${draft.id}`, { method: 'PUT', account, body: multipart }),
      only('title'),
    );

    const approverId = draft.approvers[0]!.id;
    for (const field of ['name', 'role_ar', 'role_en']) {
      await expectValidation(
        await service.request(`/documents/${draft.id}/approvers`, {
          method: 'POST',
          account,
          ...json({ name: 'Sara', phone: PHONE_B, [field]: value }),
        }),
        only(field),
      );
      await expectValidation(
        await service.request(`/approvers/${approverId}`, {
          method: 'PUT',
          account,
          ...json({ phone: PHONE_A, [field]: value }),
        }),
        only(field),
      );
    }
    await expectValidation(
      await service.request(`/approvers/${approverId}`, {
        method: 'PUT',
        account,
        ...json({ phone: PHONE_A, name_ar: value, name_en: value }),
      }),
      { ...only('name_ar'), ...only('name_en') },
    );
    const after = documentOf(await (await service.request(`/documents/${draft.id}`, { account })).json());
    expect(after).toEqual(draft);
  });

  it('is refused as an account name and as an API key name', async () => {
    const refused = await createAccountWithKey(service.database.db, {
      name: value,
      email: `bidi-${Date.now()}@example.test`,
      password: 'long enough password',
    }).catch((err: unknown) => err);
    expect(isAppError(refused) && refused.details).toEqual(only('name'));

    const holder = await createDashboardAccount(service);
    const client = new FormClient(service.api.url);
    const csrf = await client.signIn(holder.email, holder.password);
    const res = await client.post('/admin/api/keys', { _csrf: csrf, name: value, scopes: 'documents:read' });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('Remove the hidden text-direction characters');
    expect(await apiKeysStore(service.database.db).listByAccount(holder.accountId)).toHaveLength(1);
    await client.close();
  });
});

describe('the marks Arabic text uses (LRM, RLM, ALM)', () => {
  it('are accepted and kept exactly, on create, update and the approver routes', async () => {
    const draft = await createDraft(service, account, { title_ar: MARKED_AR, title_en: MARKED_EN }, [
      { name_ar: MARKED_AR, name_en: MARKED_EN, role_ar: MARKED_AR, phone: PHONE_A },
    ]);
    expect(draft).toMatchObject({ title_ar: MARKED_AR, title_en: MARKED_EN });
    expect(draft.approvers[0]).toMatchObject({ name_ar: MARKED_AR, name_en: MARKED_EN, role_ar: MARKED_AR });

    const updated = await service.request(`/documents/${draft.id}`, {
      method: 'PUT',
      account,
      ...json({ title: MARKED_EN, cc: [{ phone: PHONE_B, name: MARKED_AR }] }),
    });
    expect(documentOf(await updated.json())).toMatchObject({
      title_ar: MARKED_EN,
      cc: [{ phone: PHONE_B, name: MARKED_AR }],
    });
    const added = await service.request(`/documents/${draft.id}/approvers`, {
      method: 'POST',
      account,
      ...json({ name: MARKED_AR, role_en: MARKED_EN, phone: PHONE_B }),
    });
    expect(approverOf(await added.json())).toMatchObject({ name_ar: MARKED_AR, role_en: MARKED_EN });
  });
});
