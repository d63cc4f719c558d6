import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  approverOf,
  createDraft,
  documentOf,
  expectError,
  expectValidation,
  json,
  pageOf,
  PHONE_A,
  PHONE_B,
  startDocumentsService,
  type ApproverJson,
  type DocumentsService,
} from './support.ts';

let service: DocumentsService;
let account: TestAccount;
beforeAll(async () => {
  service = await startDocumentsService();
  account = await service.createAccount();
});
afterAll(() => service.close());

const setStatus = (id: string, status: string) =>
  service.database.db('documents').where({ id }).update({ status });
const add = (documentId: string, body: unknown) =>
  service.request(`/documents/${documentId}/approvers`, { method: 'POST', account, ...json(body) });
const change = (id: string, body: unknown) =>
  service.request(`/approvers/${id}`, { method: 'PUT', account, ...json(body) });

describe('GET /documents/{documentId}/approvers', () => {
  it('lists them in order with the meta block', async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [
      { name: 'B', phone: PHONE_B, order_index: 2 },
      { name: 'A', phone: PHONE_A, order_index: 1 },
    ]);
    const page = pageOf(await (await service.request(`/documents/${doc.id}/approvers`, { account })).json());
    expect((page.data as ApproverJson[]).map((a) => a.name_en)).toEqual(['A', 'B']);
    expect(page.meta).toEqual({ current_page: 1, per_page: 50, total: 2, last_page: 1 });
    expect(page.data).toEqual(doc.approvers);
  });
});

describe('POST /documents/{documentId}/approvers', () => {
  it('adds an approver last by default, or at a free position; phone normalised; 201', async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [{ name: 'A', phone: PHONE_A }]);
    const res = await add(doc.id, {
      name_ar: 'بدر',
      name_en: 'Badr',
      phone: '+966 55 123 4567',
      role_ar: 'مدير',
    });
    expect(res.status).toBe(201);
    const added = approverOf(await res.json());
    expect(added).toMatchObject({
      document_id: doc.id,
      name_ar: 'بدر',
      name_en: 'Badr',
      phone: PHONE_B,
      role_ar: 'مدير',
      role_en: null,
      action_type: 'sign',
      order_index: 2,
      status: 'waiting',
      language: null,
    });
    const placed = approverOf(
      await (
        await add(doc.id, {
          name: 'C',
          phone: 966501234567,
          order: 10,
          action_type: 'review_only',
          page: 2,
          x: 10.5,
          y: 20,
          language: 'en',
        })
      ).json(),
    );
    expect(placed).toMatchObject({ order_index: 10, page: 2, x: 10.5, y: 20, width: null, language: 'en' });
    const next = approverOf(await (await add(doc.id, { name: 'D', phone: PHONE_A })).json());
    expect(next.order_index).toBe(11);
    const all = documentOf(await (await service.request(`/documents/${doc.id}`, { account })).json());
    expect(all.approvers.map((a) => a.name_en)).toEqual(['A', 'Badr', 'C', 'D']);
  });

  it("joins another approver's signing group with its order_index; without one, a position of its own", async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [
      { name: 'A', phone: PHONE_A },
      { name: 'B', phone: PHONE_B },
    ]);
    const joined = await add(doc.id, { name: 'C', phone: PHONE_A, order_index: 1 });
    expect(joined.status).toBe(201);
    expect(approverOf(await joined.json()).order_index).toBe(1);
    const alone = approverOf(await (await add(doc.id, { name: 'D', phone: PHONE_B })).json());
    expect(alone.order_index).toBe(3); // after the last position, not into a group
    const [, b] = doc.approvers as [ApproverJson, ApproverJson];
    const moved = await change(b.id, { order: 3 }); // the alias, onto D's position
    expect(moved.status).toBe(200);
    const all = documentOf(await (await service.request(`/documents/${doc.id}`, { account })).json());
    expect(all.approvers.map((a) => [a.name_en, a.order_index])).toEqual([
      ['A', 1],
      ['C', 1],
      ['B', 3],
      ['D', 3],
    ]);
  });

  it('keeps names exactly', async () => {
    const doc = await createDraft(service, account);
    const name = 'عبدُ اللّٰه Zoe\u0308';
    const added = approverOf(await (await add(doc.id, { name, phone: PHONE_A })).json());
    expect(Buffer.from(added.name_ar)).toEqual(Buffer.from(name));
    expect(Buffer.from(added.name_en)).toEqual(Buffer.from(name));
  });

  it('validates every field', async () => {
    const doc = await createDraft(service, account);
    await expectValidation(await add(doc.id, {}), {
      name_ar: ['name_ar is required unless name is given (one name for both languages)'],
      name_en: ['name_en is required unless name is given (one name for both languages)'],
      phone: ['phone is required'],
    });
    await expectValidation(
      await add(doc.id, {
        name: 'x'.repeat(256),
        phone: true,
        role_ar: 'a\u0000b',
        action_type: 'approve',
        order_index: 'first',
        language: 'ar-SA',
      }),
      {
        name: ['name must be at most 255 characters'],
        phone: ['phone must be a string of digits such as 966501234567'],
        role_ar: ['role_ar must not contain line breaks or other control characters'],
        action_type: ['action_type must be one of: sign, stamp, approve_only, review_only'],
        order_index: ['order_index must be a whole number from 1 to 50'],
        language: ['language must be one of: ar, en'],
      },
    );
    await expectValidation(await add(doc.id, { name: 'A', phone: PHONE_A, page: 3, x: 0, y: 0 }), {
      page: ['page 3 is beyond the end of the PDF, which has 2 pages'],
    });
    await expectValidation(await add(doc.id, { name: 'A', phone: PHONE_A, width: 100 }), {
      page: ['page is required when a placement (page, x, y, width) is given'],
      x: ['x is required when a placement (page, x, y, width) is given'],
      y: ['y is required when a placement (page, x, y, width) is given'],
    });
    await expectValidation(await add(doc.id, { name: 'A', phone: PHONE_A, order: 2, order_index: 3 }), {
      order: ['give order_index or order, not both'],
    });
  });

  it('at most 50 approvers', async () => {
    const approvers = Array.from({ length: 49 }, (_, i) => ({ name: `A${i}`, phone: PHONE_A }));
    const doc = await createDraft(service, account, { title: 'x' }, approvers);
    expect((await add(doc.id, { name: 'Last', phone: PHONE_B })).status).toBe(201);
    const extra = await add(doc.id, { name: 'Extra', phone: PHONE_B });
    expect(extra.status).toBe(409);
    expect(((await extra.json()) as { error: { message: string } }).error.message).toBe(
      'A document can have at most 50 approvers and this one has them all; remove one first',
    );
  });

  it.each(['pending', 'in_progress', 'approved', 'rejected', 'expired', 'voided'])(
    '409 once the document is %s',
    async (status) => {
      const doc = await createDraft(service, account);
      await setStatus(doc.id, status);
      await expectError(
        await add(doc.id, { name: 'Late', phone: PHONE_A }),
        409,
        `Document is ${status}; approvers can only be added to drafts.`,
      );
      expect(await service.database.db('approvers').where({ document_id: doc.id })).toHaveLength(1);
    },
  );
});

describe('GET, PUT and DELETE /approvers/{id}', () => {
  it('reads one approver', async () => {
    const doc = await createDraft(service, account);
    const res = await service.request(`/approvers/${doc.approvers[0]!.id}`, { account });
    expect(approverOf(await res.json())).toEqual(doc.approvers[0]);
  });

  it('changes only the given fields', async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [
      { name: 'A', phone: PHONE_A, role_en: 'Clerk', page: 1, x: 5, y: 5, width: 90 },
      { name: 'B', phone: PHONE_B },
    ]);
    const [a, b] = doc.approvers as [ApproverJson, ApproverJson];
    const renamed = approverOf(
      await (await change(a.id, { name_en: 'Anne', phone: '+447911123456' })).json(),
    );
    expect(renamed).toMatchObject({
      name_ar: 'A',
      name_en: 'Anne',
      phone: '447911123456',
      role_en: 'Clerk',
      page: 1,
    });
    const both = approverOf(
      await (await change(a.id, { name: 'Amal', role_en: null, language: 'ar' })).json(),
    );
    expect(both).toMatchObject({ name_ar: 'Amal', name_en: 'Amal', role_en: null, language: 'ar' });
    const moved = approverOf(await (await change(a.id, { page: 2, x: 1, y: 2 })).json());
    expect(moved).toMatchObject({ page: 2, x: 1, y: 2, width: null });
    const unplaced = approverOf(await (await change(a.id, { page: null })).json());
    expect(unplaced).toMatchObject({ page: null, x: null, y: null, width: null });
    const reordered = approverOf(
      await (await change(a.id, { order_index: 3, action_type: 'approve_only' })).json(),
    );
    expect(reordered).toMatchObject({ order_index: 3, action_type: 'approve_only' });
    const ignored = approverOf(
      await (await change(b.id, { status: 'completed', link_token: 'x', document_id: a.id })).json(),
    );
    expect(ignored).toMatchObject({ status: 'waiting', document_id: doc.id });
    expect(await service.database.db('approvers').where({ id: b.id }).first()).toMatchObject({
      link_token_sha256: null,
      link_token_sealed: null,
    });
  });

  it('validates changes', async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [
      { name: 'A', phone: PHONE_A },
      { name: 'B', phone: PHONE_B },
    ]);
    const [a] = doc.approvers as [ApproverJson];
    await expectValidation(await change(a.id, { phone: '+1 555 555 0123', name_ar: ' ' }), {
      name_ar: ['name_ar must not be blank'],
      phone: ['phone is not a valid phone number for its country code'],
    });
    await expectValidation(await change(a.id, { page: 9, x: 1, y: 1 }), {
      page: ['page 9 is beyond the end of the PDF, which has 2 pages'],
    });
    await expectValidation(await change(a.id, { x: 1 }), {
      page: ['page is required when a placement (page, x, y, width) is given'],
      y: ['y is required when a placement (page, x, y, width) is given'],
    });
  });

  it('removes an approver', async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [
      { name: 'A', phone: PHONE_A },
      { name: 'B', phone: PHONE_B },
    ]);
    const res = await service.request(`/approvers/${doc.approvers[0]!.id}`, { method: 'DELETE', account });
    expect(await res.json()).toEqual({ success: true, data: { id: doc.approvers[0]!.id, deleted: true } });
    const after = documentOf(await (await service.request(`/documents/${doc.id}`, { account })).json());
    expect(after.approvers.map((a) => a.name_en)).toEqual(['B']);
    await expectError(
      await service.request(`/approvers/${doc.approvers[0]!.id}`, { account }),
      404,
      'Approver not found',
    );
  });

  it.each(['pending', 'in_progress', 'approved', 'rejected', 'expired', 'voided'])(
    '409 for changes and removals once the document is %s',
    async (status) => {
      const doc = await createDraft(service, account);
      await setStatus(doc.id, status);
      const id = doc.approvers[0]!.id;
      await expectError(
        await change(id, { name: 'Changed' }),
        409,
        `Document is ${status}; approvers can only be changed while the document is a draft.`,
      );
      await expectError(
        await service.request(`/approvers/${id}`, { method: 'DELETE', account }),
        409,
        `Document is ${status}; approvers can only be removed while the document is a draft.`,
      );
      expect(await service.database.db('approvers').where({ id }).first()).toMatchObject({ name_en: 'Ali' });
    },
  );
});
