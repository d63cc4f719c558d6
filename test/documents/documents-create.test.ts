import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentEventsStore } from '../../src/features/events/document-events-store.ts';
import type { FormValue } from '../helpers/multipart.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  createDraft,
  documentOf,
  expectError,
  expectValidation,
  PHONE_A,
  PHONE_B,
  postDocument,
  startDocumentsService,
  type DocumentsService,
} from './support.ts';

let service: DocumentsService;
let account: TestAccount;
beforeAll(async () => {
  service = await startDocumentsService();
  account = await service.createAccount();
});
afterAll(() => service.close());

const ALI = { name: 'Ali', phone: PHONE_A };

describe('POST /documents', () => {
  it('creates a draft with its reference, file digest, defaults and ordered approvers', async () => {
    const pdf = await makePdf(3);
    const before = Date.now();
    const res = await postDocument(
      service,
      account,
      { title_ar: 'عقد عمل', title_en: 'Employment contract', department: 'hr' },
      {
        file: pdf,
        filename: 'عقد.pdf',
        approvers: [
          { name_ar: 'سارة', name_en: 'Sara', phone: '+966 55 123 4567', order_index: 2, role_en: 'CFO' },
          {
            name: 'Ali',
            phone: PHONE_A,
            order: 1,
            action_type: 'stamp',
            page: 3,
            x: 72,
            y: 100.5,
            width: 150,
          },
        ],
      },
    );
    expect(res.status).toBe(201);
    const doc = documentOf(await res.json());
    expect(res.headers.get('location')).toBe(`/api/v1/documents/${doc.id}`);
    expect(doc).toMatchObject({
      reference: expect.stringMatching(new RegExp(`^WQT-${new Date().getUTCFullYear()}-\\d{6}$`)) as string,
      title_ar: 'عقد عمل',
      title_en: 'Employment contract',
      department: 'hr',
      workflow_type: 'sequential',
      status: 'draft',
      page_count: 3,
      file: { name: 'عقد.pdf', size: pdf.length, sha256: createHash('sha256').update(pdf).digest('hex') },
      sent_at: null,
      completed_at: null,
      rejection_reason: null,
    });
    const days7 = 7 * 24 * 3600 * 1000;
    const expires = Date.parse(doc.expires_at);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + days7);
    expect(expires).toBeLessThanOrEqual(Date.now() + days7);
    expect(doc.approvers.map((a) => [a.name_en, a.order_index, a.phone, a.action_type])).toEqual([
      ['Ali', 1, PHONE_A, 'stamp'],
      ['Sara', 2, PHONE_B, 'sign'],
    ]);
    expect(doc.approvers[0]).toMatchObject({
      name_ar: 'Ali',
      page: 3,
      x: 72,
      y: 100.5,
      width: 150,
      status: 'waiting',
    });
    expect(doc.approvers[1]).toMatchObject({ role_en: 'CFO', role_ar: null, page: null, language: null });

    // The file is in storage, byte for byte; the response leaks no storage key or token.
    const row = await service.database.db('documents').where({ id: doc.id }).first<{ file_key: string }>();
    expect(await readFile(path.join(service.dataDir, 'files', row.file_key))).toEqual(pdf);
    const text = JSON.stringify(doc);
    expect(text).not.toContain(row.file_key);
    expect(text).not.toMatch(/token|file_key|account_id/);
  });

  it('accepts approvers that name the same order_index (or order): a signing group', async () => {
    const doc = await createDraft(service, account, { title: 'Group' }, [
      { name: 'Ali', phone: PHONE_A, order_index: 1 },
      { name: 'Bo', phone: PHONE_B, order: 1 },
      { name: 'Cy', phone: PHONE_A }, // its place in the list: 3
    ]);
    expect(doc.approvers.map((a) => [a.name_en, a.order_index])).toEqual([
      ['Ali', 1],
      ['Bo', 1],
      ['Cy', 3],
    ]);
  });

  it('records document.created in the same transaction, with the serialized document', async () => {
    const doc = await createDraft(service, account);
    const events = await documentEventsStore(service.database.db).listByDocument(account.accountId, doc.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: 'document.created',
      dedupeKey: `document.created:${doc.id}`,
      data: { document: { ...doc } },
    });
  });

  it('title and name shorthand fill both languages; a given language wins over the shorthand', async () => {
    const doc = await createDraft(service, account, { title: 'Shared', title_en: 'English only' }, [
      { name: 'نورة', phone: PHONE_A },
      { name: 'Sam', name_ar: 'سام', phone: PHONE_B },
    ]);
    expect([doc.title_ar, doc.title_en]).toEqual(['Shared', 'English only']);
    expect(doc.approvers.map((a) => [a.name_ar, a.name_en])).toEqual([
      ['نورة', 'نورة'],
      ['سام', 'Sam'],
    ]);
  });

  it('keeps Arabic and English text exactly: combining marks, NFD, emoji, no trimming or normalisation', async () => {
    const titleAr = 'عَقْدُ العَمَلِ ﷲ — نسخة ٢'; // harakat (combining marks), a ligature, Arabic digits
    const titleEn = 'Cafe\u0301 contract \u{1F4DD}'; // NFD é and an astral character
    const name = 'Zoe\u0308 محمّد';
    expect(titleEn.normalize('NFC')).not.toBe(titleEn);
    const doc = await createDraft(service, account, { title_ar: titleAr, title_en: titleEn }, [
      { name, role_ar: 'مديرُ الموارد', phone: PHONE_A },
    ]);
    const bytes = (s: string) => Buffer.from(s, 'utf8').toString('hex');
    expect(bytes(doc.title_ar)).toBe(bytes(titleAr));
    expect(bytes(doc.title_en)).toBe(bytes(titleEn));
    expect(bytes(doc.approvers[0]!.name_ar)).toBe(bytes(name));
    expect(bytes(doc.approvers[0]!.role_ar!)).toBe(bytes('مديرُ الموارد'));
    const stored = await service.database.db('documents').where({ id: doc.id }).first<{ title_en: string }>();
    expect(bytes(stored.title_en)).toBe(bytes(titleEn));
    const fetched = documentOf(await (await service.request(`/documents/${doc.id}`, { account })).json());
    expect(bytes(fetched.title_ar)).toBe(bytes(titleAr));
  });

  it('accepts 255 characters and a draft without approvers', async () => {
    const doc = await createDraft(service, account, { title: 'ع'.repeat(255) }, []);
    expect(doc.title_ar).toHaveLength(255);
    expect(doc.approvers).toEqual([]);
  });

  it('ignores fields a client may not set', async () => {
    const other = await service.createAccount();
    const doc = await createDraft(service, account, {
      title: 'Sneaky',
      status: 'approved',
      reference: 'WQT-1999-999999',
      account_id: other.accountId,
      id: '00000000-0000-4000-8000-000000000000',
      file_sha256: 'f'.repeat(64),
      final_token: 'x',
    });
    expect(doc.status).toBe('draft');
    expect(doc.reference).not.toBe('WQT-1999-999999');
    expect(doc.id).not.toBe('00000000-0000-4000-8000-000000000000');
    expect(doc.file.sha256).not.toBe('f'.repeat(64));
    const row = await service.database
      .db('documents')
      .where({ id: doc.id })
      .first<{ account_id: string; final_token_sha256: null }>();
    expect(row).toMatchObject({ account_id: account.accountId, final_token_sha256: null });
  });

  it('is multipart only: JSON is a 415', async () => {
    const res = await service.request('/documents', {
      method: 'POST',
      account,
      body: JSON.stringify({ title: 'x' }),
    });
    await expectError(res, 415, /multipart\/form-data/);
  });

  it('a malformed multipart body is a 400', async () => {
    const res = await service.request('/documents', {
      method: 'POST',
      account,
      headers: { 'content-type': 'multipart/form-data' }, // no boundary
      body: 'garbage',
    });
    await expectError(res, 400, /Malformed multipart/);
  });

  describe('field rules', () => {
    const T = 'title_ar is required unless title is given (one title for both languages)';
    const E = 'title_en is required unless title is given (one title for both languages)';
    const cases: [
      string,
      Record<string, FormValue>,
      Record<string, FormValue>[],
      Record<string, string[]>,
    ][] = [
      ['no title', {}, [ALI], { title_ar: [T], title_en: [E] }],
      ['only title_ar', { title_ar: 'عقد' }, [ALI], { title_en: [E] }],
      ['only title_en', { title_en: 'Deal' }, [ALI], { title_ar: [T] }],
      [
        'title too long',
        { title: 'x'.repeat(256) },
        [ALI],
        { title: ['title must be at most 255 characters'] },
      ],
      ['blank title', { title: '   ' }, [ALI], { title: ['title must not be blank'] }],
      [
        'title with a line break',
        { title: 'a\nb' },
        [ALI],
        { title: ['title must not contain line breaks or other control characters'] },
      ],
      [
        'title_en too long',
        { title_ar: 'ع', title_en: 'y'.repeat(300) },
        [ALI],
        { title_en: ['title_en must be at most 255 characters'] },
      ],
      ...['HR', '1hr', 'h'.repeat(33), 'fin ance'].map(
        (
          department,
        ): [string, Record<string, FormValue>, Record<string, FormValue>[], Record<string, string[]>] => [
          `department ${department}`,
          { title: 'x', department },
          [ALI],
          {
            department: [
              'department must be a lowercase key: a letter, then up to 31 letters, digits, _ or -',
            ],
          },
        ],
      ),
      [
        'workflow_type',
        { title: 'x', workflow_type: 'random' },
        [ALI],
        { workflow_type: ['workflow_type must be one of: sequential, parallel'] },
      ],
      ...['0', '366', '1.5', 'seven', '-3'].map(
        (
          days,
        ): [string, Record<string, FormValue>, Record<string, FormValue>[], Record<string, string[]>] => [
          `expires_in_days ${days}`,
          { title: 'x', expires_in_days: days },
          [ALI],
          { expires_in_days: ['expires_in_days must be a whole number from 1 to 365'] },
        ],
      ),
      [
        'approver without phone',
        { title: 'x' },
        [{ name: 'Ali' }],
        { 'approvers.0.phone': ['phone is required'] },
      ],
      [
        'approver with a national phone',
        { title: 'x' },
        [ALI, { name: 'Bo', phone: '0501234567' }],
        {
          'approvers.1.phone': [
            'phone must be an international WhatsApp number: the country code then the number, digits only, optionally after a +, such as 966501234567',
          ],
        },
      ],
      [
        'approver with an invalid phone',
        { title: 'x' },
        [{ name: 'Bo', phone: '9665012345' }],
        { 'approvers.0.phone': ['phone is not a valid phone number for its country code'] },
      ],
      [
        'approver without a name',
        { title: 'x' },
        [{ phone: PHONE_A, name_en: 'Ali' }],
        { 'approvers.0.name_ar': ['name_ar is required unless name is given (one name for both languages)'] },
      ],
      [
        'action_type',
        { title: 'x' },
        [{ ...ALI, action_type: 'sing' }],
        { 'approvers.0.action_type': ['action_type must be one of: sign, stamp, approve_only, review_only'] },
      ],
      [
        'order_index 0',
        { title: 'x' },
        [{ ...ALI, order_index: 0 }],
        { 'approvers.0.order_index': ['order_index must be a whole number from 1 to 50'] },
      ],
      [
        'order 51',
        { title: 'x' },
        [{ ...ALI, order: 51 }],
        { 'approvers.0.order': ['order must be a whole number from 1 to 50'] },
      ],
      [
        'order_index and order disagree',
        { title: 'x' },
        [{ ...ALI, order_index: 1, order: 2 }],
        { 'approvers.0.order': ['give order_index or order, not both'] },
      ],
      [
        'an approver without order_index whose place in the list another approver names',
        { title: 'x' },
        [
          { ...ALI, order_index: 2 },
          { name: 'Bo', phone: PHONE_B }, // by position: 2, but it never joins a signing group unasked
        ],
        {
          'approvers.1.order_index': [
            "order_index 2 (this approver's place in the list) is taken by approvers.0; give order_index explicitly: the same to sign as a group, another for a position of its own",
          ],
        },
      ],
      [
        'placement without coordinates',
        { title: 'x' },
        [{ ...ALI, page: 1 }],
        {
          'approvers.0.x': ['x is required when a placement (page, x, y, width) is given'],
          'approvers.0.y': ['y is required when a placement (page, x, y, width) is given'],
        },
      ],
      [
        'placement out of bounds',
        { title: 'x' },
        [{ ...ALI, page: 0, x: -1, y: 20000, width: 0 }],
        {
          'approvers.0.page': ['page must be a whole number from 1 to 500'],
          'approvers.0.x': ['x must be a number from 0 to 14400'],
          'approvers.0.y': ['y must be a number from 0 to 14400'],
          'approvers.0.width': ['width must be a number greater than 0 and at most 14400'],
        },
      ],
      [
        'placement beyond the last page',
        { title: 'x' },
        [ALI, { name: 'Bo', phone: PHONE_B, page: 3, x: 10, y: 10 }],
        { 'approvers.1.page': ['page 3 is beyond the end of the PDF, which has 2 pages'] },
      ],
      [
        'language',
        { title: 'x' },
        [{ ...ALI, language: 'fr' }],
        { 'approvers.0.language': ['language must be one of: ar, en'] },
      ],
      [
        'role too long',
        { title: 'x' },
        [{ ...ALI, role_en: 'r'.repeat(256) }],
        { 'approvers.0.role_en': ['role_en must be at most 255 characters'] },
      ],
      [
        'approvers with a gap',
        { title: 'x', 'approvers[1][name]': 'Bo', 'approvers[1][phone]': PHONE_B },
        [],
        { approvers: ['approvers must be numbered from approvers[0] without gaps'] },
      ],
      [
        'several problems at once',
        { department: 'Legal', expires_in_days: 0 },
        [{ name: 'Bo' }],
        {
          title_ar: [T],
          title_en: [E],
          department: ['department must be a lowercase key: a letter, then up to 31 letters, digits, _ or -'],
          expires_in_days: ['expires_in_days must be a whole number from 1 to 365'],
          'approvers.0.phone': ['phone is required'],
        },
      ],
    ];

    it.each(cases)('%s', async (_label, fields, approvers, details) => {
      const res = await postDocument(service, account, fields, { approvers });
      await expectValidation(res, details);
    });

    it('at most 50 approvers', async () => {
      const approvers = Array.from({ length: 51 }, (_, i) => ({
        name: `A${i}`,
        phone: PHONE_A,
        order_index: i + 1,
      }));
      await expectValidation(await postDocument(service, account, { title: 'x' }, { approvers }), {
        approvers: ['A document can have at most 50 approvers'],
      });
      const fifty = approvers.slice(0, 50);
      const doc = documentOf(
        await (await postDocument(service, account, { title: 'x' }, { approvers: fifty })).json(),
      );
      expect(doc.approvers).toHaveLength(50);
    });

    it('the file is required', async () => {
      await expectValidation(await postDocument(service, account, { title: 'x' }, { file: null }), {
        file: ['A PDF is required in the part named "file"'],
      });
    });

    it('a refused request leaves no row and no file', async () => {
      const documents = await service.database.db('documents').count<{ count: string }[]>({ count: '*' });
      const files = await service.storedFiles();
      await expectValidation(await postDocument(service, account, { title: 'x', department: 'BAD' }), {
        department: ['department must be a lowercase key: a letter, then up to 31 letters, digits, _ or -'],
      });
      expect(await service.database.db('documents').count<{ count: string }[]>({ count: '*' })).toEqual(
        documents,
      );
      expect(await service.storedFiles()).toEqual(files);
    });
  });

  describe('references', () => {
    it('count per account and year from 000001, with no gaps or duplicates under 20 concurrent creations', async () => {
      const fresh = await service.createAccount();
      const year = new Date().getUTCFullYear();
      const first = await createDraft(service, fresh);
      expect(first.reference).toBe(`WQT-${year}-000001`);
      // A refused creation does not use up a number.
      expect((await postDocument(service, fresh, {})).status).toBe(422);
      const pdf = await makePdf(1);
      // As a client does: past PDF_MAX_CONCURRENT_INSPECTIONS uploads at once the answer is 503, and the upload
      // is sent again after its Retry-After (spread over that second, as clients spread retries).
      const create = async (): Promise<Response> => {
        for (let attempt = 1; ; attempt++) {
          const res = await postDocument(service, fresh, { title: 'Concurrent' }, { file: pdf });
          if (res.status !== 503 || attempt === 30) return res;
          const seconds = Number(res.headers.get('retry-after'));
          await new Promise((resolve) => setTimeout(resolve, seconds * 1000 * Math.random()));
        }
      };
      const responses = await Promise.all(Array.from({ length: 20 }, create));
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
      const refs = (
        await Promise.all(responses.map(async (r) => documentOf(await r.json()).reference))
      ).sort();
      expect(refs).toEqual(
        Array.from({ length: 20 }, (_, i) => `WQT-${year}-${String(i + 2).padStart(6, '0')}`),
      );
      // Another account counts on its own.
      expect((await createDraft(service, await service.createAccount())).reference).toBe(
        `WQT-${year}-000001`,
      );
    });
  });

  describe('scopes', () => {
    it('creating needs documents:write; reading needs documents:read', async () => {
      const reader = await service.createAccount({ scopes: ['documents:read'] });
      const writer = await service.createAccount({ scopes: ['documents:write'] });
      await expectError(
        await postDocument(service, reader),
        403,
        'This API key lacks the "documents:write" scope',
      );
      expect((await service.request('/documents', { account: reader })).status).toBe(200);
      const doc = await createDraft(service, writer);
      await expectError(await service.request('/documents', { account: writer }), 403, /documents:read/);
      await expectError(
        await service.request(`/documents/${doc.id}`, { account: writer }),
        403,
        /documents:read/,
      );
    });
  });
});
