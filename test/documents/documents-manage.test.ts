import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentForm } from '../helpers/multipart.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import { readFixture } from '../fixtures/pdf/generate.ts';
import {
  createDraft,
  documentOf,
  expectError,
  expectValidation,
  json,
  pageOf,
  PHONE_A,
  PHONE_B,
  startDocumentsService,
  type DocumentJson,
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
const fileKeyOf = async (id: string) =>
  (await service.database.db('documents').where({ id }).first<{ file_key: string }>()).file_key;
const fileExists = async (key: string) =>
  readFile(path.join(service.dataDir, 'files', key)).then(
    () => true,
    () => false,
  );

describe('GET /documents', () => {
  let lister: TestAccount;
  let created: DocumentJson[];
  beforeAll(async () => {
    lister = await service.createAccount();
    created = [];
    for (let i = 0; i < 17; i++) created.push(await createDraft(service, lister, { title: `Doc ${i}` }));
    await setStatus(created[3]!.id, 'pending');
    await setStatus(created[5]!.id, 'approved');
  });

  it('pages newest first with 15 per page by default, with the meta block', async () => {
    const first = pageOf(await (await service.request('/documents', { account: lister })).json());
    expect(first.meta).toEqual({ current_page: 1, per_page: 15, total: 17, last_page: 2 });
    expect((first.data as DocumentJson[]).map((d) => d.title_en)).toEqual(
      Array.from({ length: 15 }, (_, i) => `Doc ${16 - i}`),
    );
    const second = pageOf(await (await service.request('/documents?page=2', { account: lister })).json());
    expect(second.meta).toEqual({ current_page: 2, per_page: 15, total: 17, last_page: 2 });
    expect((second.data as DocumentJson[]).map((d) => d.title_en)).toEqual(['Doc 1', 'Doc 0']);
    // Each item is the full document, approvers included.
    expect((second.data as DocumentJson[])[0]!.approvers).toHaveLength(1);
  });

  it('per_page from 1 to 100; a page past the end is empty', async () => {
    const one = pageOf(
      await (await service.request('/documents?per_page=1&page=17', { account: lister })).json(),
    );
    expect(one.meta).toEqual({ current_page: 17, per_page: 1, total: 17, last_page: 17 });
    expect((one.data as DocumentJson[])[0]!.title_en).toBe('Doc 0');
    const hundred = pageOf(
      await (await service.request('/documents?per_page=100', { account: lister })).json(),
    );
    expect(hundred.data).toHaveLength(17);
    const past = pageOf(await (await service.request('/documents?page=3', { account: lister })).json());
    expect(past).toEqual({ data: [], meta: { current_page: 3, per_page: 15, total: 17, last_page: 2 } });
  });

  it('filters by status', async () => {
    const pending = pageOf(
      await (await service.request('/documents?status=pending', { account: lister })).json(),
    );
    expect((pending.data as DocumentJson[]).map((d) => d.id)).toEqual([created[3]!.id]);
    expect(pending.meta.total).toBe(1);
    const drafts = pageOf(
      await (await service.request('/documents?status=draft', { account: lister })).json(),
    );
    expect(drafts.meta.total).toBe(15);
    const none = pageOf(
      await (await service.request('/documents?status=voided', { account: lister })).json(),
    );
    expect(none).toEqual({ data: [], meta: { current_page: 1, per_page: 15, total: 0, last_page: 1 } });
  });

  it.each([
    ['per_page=0', { per_page: ['per_page must be a whole number from 1 to 100'] }],
    ['per_page=101', { per_page: ['per_page must be a whole number from 1 to 100'] }],
    ['per_page=ten', { per_page: ['per_page must be a whole number from 1 to 100'] }],
    ['per_page=2.5', { per_page: ['per_page must be a whole number from 1 to 100'] }],
    ['page=0', { page: ['page must be a whole number from 1 to 1000000'] }],
    ['page=-1', { page: ['page must be a whole number from 1 to 1000000'] }],
    ['page=1&page=2', { page: ['page must be a whole number from 1 to 1000000'] }],
    [
      'status=done',
      { status: ['status must be one of: draft, pending, in_progress, approved, rejected, expired, voided'] },
    ],
  ])('422 for %s', async (query, details) => {
    await expectValidation(await service.request(`/documents?${query}`, { account: lister }), details);
  });

  it("lists only the caller's own documents", async () => {
    const other = await service.createAccount();
    const page = pageOf(await (await service.request('/documents', { account: other })).json());
    expect(page).toEqual({ data: [], meta: { current_page: 1, per_page: 15, total: 0, last_page: 1 } });
  });
});

describe('GET /documents/{id}', () => {
  it('returns the document with its approvers ordered by order_index', async () => {
    const doc = await createDraft(service, account, { title: 'Ordered' }, [
      { name: 'Third', phone: PHONE_A, order_index: 3 },
      { name: 'First', phone: PHONE_B, order_index: 1 },
      { name: 'Second', phone: PHONE_A, order: 2 },
    ]);
    const fetched = documentOf(await (await service.request(`/documents/${doc.id}`, { account })).json());
    expect(fetched.approvers.map((a) => [a.name_en, a.order_index])).toEqual([
      ['First', 1],
      ['Second', 2],
      ['Third', 3],
    ]);
    expect(fetched).toEqual(doc);
  });

  it('404 for an unknown or malformed id', async () => {
    await expectError(
      await service.request('/documents/00000000-0000-4000-8000-000000000000', { account }),
      404,
      'Document not found',
    );
    await expectError(await service.request('/documents/not-a-uuid', { account }), 404, 'Document not found');
  });
});

describe('PUT /documents/{id}', () => {
  const put = (id: string, body: unknown) =>
    service.request(`/documents/${id}`, { method: 'PUT', account, ...json(body) });

  it('changes only the given fields; title sets both languages, title_ar one', async () => {
    const doc = await createDraft(service, account, { title_ar: 'قديم', title_en: 'Old', department: 'hr' });
    const both = documentOf(await (await put(doc.id, { title: 'New' })).json());
    expect(both).toMatchObject({ title_ar: 'New', title_en: 'New', department: 'hr' });
    expect(Date.parse(both.updated_at)).toBeGreaterThanOrEqual(Date.parse(doc.updated_at));
    const one = documentOf(await (await put(doc.id, { title_ar: 'جديد', workflow_type: 'parallel' })).json());
    expect(one).toMatchObject({ title_ar: 'جديد', title_en: 'New', workflow_type: 'parallel' });
    const cleared = documentOf(await (await put(doc.id, { department: null })).json());
    expect(cleared.department).toBeNull();
    expect(cleared.reference).toBe(doc.reference);
    expect(cleared.approvers).toEqual(doc.approvers);
  });

  it('keeps Arabic text exactly through JSON', async () => {
    const doc = await createDraft(service, account);
    const title = 'مُوافَقةُ الإدارة\u0651';
    const updated = documentOf(await (await put(doc.id, { title_ar: title, title_en: 'Cafe\u0301' })).json());
    expect(Buffer.from(updated.title_ar)).toEqual(Buffer.from(title));
    expect(Buffer.from(updated.title_en)).toEqual(Buffer.from('Cafe\u0301'));
  });

  it('expires_in_days renews expires_at from the time of the update', async () => {
    const doc = await createDraft(service, account, { title: 'x', expires_in_days: 1 });
    await service.database
      .db('documents')
      .where({ id: doc.id })
      .update({ expires_at: new Date(Date.now() - 3600_000) });
    const before = Date.now();
    const updated = documentOf(await (await put(doc.id, { expires_in_days: 30 })).json());
    const expires = Date.parse(updated.expires_at);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 30 * 86400_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * 86400_000);
  });

  it('approvers, when given, replace all of them', async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [
      { name: 'A', phone: PHONE_A },
      { name: 'B', phone: PHONE_B },
    ]);
    const updated = documentOf(
      await (
        await put(doc.id, {
          approvers: [{ name_ar: 'ج', name_en: 'C', phone: '+966501234567', page: 2, x: 1, y: 2 }],
        })
      ).json(),
    );
    expect(updated.approvers.map((a) => [a.name_ar, a.name_en, a.order_index, a.page])).toEqual([
      ['ج', 'C', 1, 2],
    ]);
    const none = documentOf(await (await put(doc.id, { approvers: [] })).json());
    expect(none.approvers).toEqual([]);
  });

  it('validates like creation', async () => {
    const doc = await createDraft(service, account);
    await expectValidation(
      await put(doc.id, {
        title: '',
        title_en: 'x'.repeat(256),
        department: 'Legal',
        workflow_type: 'fast',
        expires_in_days: 400,
        approvers: [
          { name: 'A', phone: '123' },
          { phone: PHONE_A, name: 'B', page: 5, x: 1, y: 1 },
        ],
      }),
      {
        title: ['title must not be blank'],
        title_en: ['title_en must be at most 255 characters'],
        department: ['department must be a lowercase key: a letter, then up to 31 letters, digits, _ or -'],
        workflow_type: ['workflow_type must be one of: sequential, parallel'],
        expires_in_days: ['expires_in_days must be a whole number from 1 to 365'],
        'approvers.0.phone': [
          'phone must be an international WhatsApp number: the country code then the number, digits only, optionally after a +, such as 966501234567',
        ],
      },
    );
    await expectValidation(
      await put(doc.id, { approvers: [{ name: 'B', phone: PHONE_A, page: 5, x: 1, y: 1 }] }),
      {
        'approvers.0.page': ['page 5 is beyond the end of the PDF, which has 2 pages'],
      },
    );
    await expectValidation(await put(doc.id, { expires_in_days: '7x' }), {
      expires_in_days: ['expires_in_days must be a whole number from 1 to 365'],
    });
  });

  it('ignores status, reference and other fields a client may not set', async () => {
    const doc = await createDraft(service, account);
    const updated = documentOf(
      await (
        await put(doc.id, {
          status: 'approved',
          reference: 'WQT-2000-000001',
          file_sha256: '0',
          page_count: 99,
        })
      ).json(),
    );
    expect(updated).toMatchObject({
      status: 'draft',
      reference: doc.reference,
      file: doc.file,
      page_count: 2,
    });
  });

  it('a body that is not JSON or multipart is a 415; malformed JSON a 400', async () => {
    const doc = await createDraft(service, account);
    await expectError(
      await service.request(`/documents/${doc.id}`, {
        method: 'PUT',
        account,
        headers: { 'content-type': 'text/plain' },
        body: 'title=x',
      }),
      415,
    );
    await expectError(
      await service.request(`/documents/${doc.id}`, { method: 'PUT', account, body: '{"title":' }),
      400,
      'Malformed JSON in request body',
    );
  });

  it('multipart with a new file replaces the PDF and removes the old one from storage', async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [
      { name: 'A', phone: PHONE_A, page: 2, x: 1, y: 1 },
    ]);
    const oldKey = await fileKeyOf(doc.id);
    const pdf = await makePdf(4, 'Replacement');
    const res = await service.request(`/documents/${doc.id}`, {
      method: 'PUT',
      account,
      body: documentForm({ title_en: 'Replaced' }, { file: pdf, filename: 'v2.pdf' }),
    });
    const updated = documentOf(await res.json());
    expect(updated).toMatchObject({
      title_en: 'Replaced',
      title_ar: 'x',
      page_count: 4,
      file: { name: 'v2.pdf', size: pdf.length },
    });
    expect(updated.file.sha256).not.toBe(doc.file.sha256);
    const newKey = await fileKeyOf(doc.id);
    expect(newKey).not.toBe(oldKey);
    expect(await fileExists(oldKey)).toBe(false);
    expect(await readFile(path.join(service.dataDir, 'files', newKey))).toEqual(pdf);
  });

  it('a refused replacement file keeps the old one and stores nothing', async () => {
    const doc = await createDraft(service, account, { title: 'x' }, [
      { name: 'A', phone: PHONE_A, page: 2, x: 1, y: 1 },
    ]);
    const key = await fileKeyOf(doc.id);
    const files = await service.storedFiles();
    const encrypted = await service.request(`/documents/${doc.id}`, {
      method: 'PUT',
      account,
      body: documentForm({}, { file: await readFixture('encrypted') }),
    });
    await expectValidation(encrypted, { file: ['The PDF is encrypted; upload it without a password.'] });
    // One page, but an approver is placed on page 2.
    const shorter = await service.request(`/documents/${doc.id}`, {
      method: 'PUT',
      account,
      body: documentForm({}, { file: await makePdf(1) }),
    });
    await expectValidation(shorter, {
      file: [
        'The new PDF has 1 page but approver A is placed on page 2; change or clear that placement first, or send the approvers again with the file',
      ],
    });
    expect(await fileKeyOf(doc.id)).toBe(key);
    expect(await service.storedFiles()).toEqual(files);
    // With the approvers sent again, the shorter file fits.
    const together = await service.request(`/documents/${doc.id}`, {
      method: 'PUT',
      account,
      body: documentForm({}, { file: await makePdf(1), approvers: [{ name: 'A', phone: PHONE_A }] }),
    });
    expect(documentOf(await together.json()).page_count).toBe(1);
  });

  it.each(['pending', 'in_progress', 'approved', 'rejected', 'expired', 'voided'])(
    '409 naming the status when the document is %s, JSON or multipart',
    async (status) => {
      const doc = await createDraft(service, account);
      await setStatus(doc.id, status);
      const message = `Document is ${status}; only drafts can be updated.`;
      await expectError(await put(doc.id, { title: 'New' }), 409, message);
      await expectError(
        await service.request(`/documents/${doc.id}`, {
          method: 'PUT',
          account,
          body: documentForm({ title: 'New' }, { file: await makePdf(1) }),
        }),
        409,
        message,
      );
      const row = await service.database.db('documents').where({ id: doc.id }).first<{ title_en: string }>();
      expect(row.title_en).toBe('Contract');
    },
  );
});

describe('DELETE /documents/{id}', () => {
  it('removes the draft, its approvers and its file', async () => {
    const doc = await createDraft(service, account);
    const key = await fileKeyOf(doc.id);
    expect(await fileExists(key)).toBe(true);
    const res = await service.request(`/documents/${doc.id}`, { method: 'DELETE', account });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, data: { id: doc.id, deleted: true } });
    expect(await fileExists(key)).toBe(false);
    expect(await service.database.db('approvers').where({ document_id: doc.id })).toEqual([]);
    await expectError(await service.request(`/documents/${doc.id}`, { account }), 404);
    await expectError(await service.request(`/documents/${doc.id}`, { method: 'DELETE', account }), 404);
  });

  it.each(['pending', 'in_progress', 'approved', 'rejected', 'expired', 'voided'])(
    '409 naming the status when the document is %s; nothing is removed',
    async (status) => {
      const doc = await createDraft(service, account);
      await setStatus(doc.id, status);
      await expectError(
        await service.request(`/documents/${doc.id}`, { method: 'DELETE', account }),
        409,
        `Document is ${status}; only drafts can be deleted.`,
      );
      expect(await fileExists(await fileKeyOf(doc.id))).toBe(true);
    },
  );
});
