import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFixture } from '../fixtures/pdf/generate.ts';
import { makePdf, makePdfOfSize } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  documentOf,
  expectValidation,
  postDocument,
  startDocumentsService,
  type DocumentsService,
} from './support.ts';

const MB = 1024 * 1024;
let service: DocumentsService;
let basic: TestAccount;
let business: TestAccount;

beforeAll(async () => {
  service = await startDocumentsService({ MAX_UPLOAD_MB_BASIC: '1', MAX_UPLOAD_MB_BUSINESS: '2' });
  basic = await service.createAccount({ plan: 'basic' });
  business = await service.createAccount({ plan: 'business' });
});
afterAll(() => service.close());

const TOO_LARGE_BASIC = 'The file is larger than the 1 MB limit of the basic plan; upload a smaller PDF.';

async function documentsOf(account: TestAccount): Promise<number> {
  const [row] = await service.database
    .db('documents')
    .where({ account_id: account.accountId })
    .count<{ count: string }[]>({ count: '*' });
  return Number(row!.count);
}

async function tempFiles(): Promise<string[]> {
  return readdir(path.join(service.dataDir, 'files', '.tmp')).catch(() => []);
}

/**
 * Streams a multipart upload of `fileBytes` bytes with node:http, honouring backpressure, and stops as soon as the
 * server answers. Reports how much had been sent by then: a server that buffers the whole body cannot answer
 * before it has all been sent.
 */
function streamUpload(
  account: TestAccount,
  fileBytes: number,
  options: { declareLength?: number } = {},
): Promise<{ status: number; body: string; sentWhenAnswered: number; total: number }> {
  const boundary = `wathiq-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nBig one\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\n` +
      `Content-Type: application/pdf\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const total = head.length + fileBytes + tail.length;
  const url = new URL(`${service.baseUrl}/documents`);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request(url, {
      method: 'POST',
      headers: {
        authorization: account.authorization,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        ...(options.declareLength !== undefined ? { 'content-length': String(options.declareLength) } : {}),
      },
    });
    const answer = new Promise<void>((settle) =>
      req.on('response', (res) => {
        answered = true;
        const sentWhenAnswered = sent;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          req.destroy();
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            sentWhenAnswered,
            total,
          });
        });
        settle();
      }),
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const write = async (chunk: Buffer) => {
      sent += chunk.length;
      if (!req.write(chunk)) await Promise.race([new Promise((r) => req.once('drain', r)), answer]);
    };
    void (async () => {
      await write(head);
      const block = Buffer.alloc(64 * 1024, 0x41);
      block.write('%PDF-1.7\n');
      for (let left = fileBytes; left > 0 && !answered; left -= block.length) {
        await write(left >= block.length ? block : block.subarray(0, left));
      }
      if (!answered) {
        await write(tail);
        req.end();
      }
    })().catch((err: unknown) => {
      if (!answered) reject(err instanceof Error ? err : new Error(String(err)));
    });
  });
}

describe('plan size limit', () => {
  it('accepts a PDF of exactly the limit and refuses one byte more, leaving no row and no file', async () => {
    const exact = await makePdfOfSize(MB);
    expect(exact.length).toBe(MB);
    const accepted = await postDocument(service, basic, { title: 'Exactly 1 MB' }, { file: exact });
    expect(documentOf(await accepted.json()).file.size).toBe(MB);

    const rows = await documentsOf(basic);
    const files = await service.storedFiles();
    const over = await makePdfOfSize(MB + 1);
    await expectValidation(await postDocument(service, basic, { title: 'One byte over' }, { file: over }), {
      file: [TOO_LARGE_BASIC],
    });
    expect(await documentsOf(basic)).toBe(rows);
    expect(await service.storedFiles()).toEqual(files);
    expect(await tempFiles()).toEqual([]);
  });

  it('is per plan', async () => {
    const file = await makePdfOfSize(1.5 * MB);
    await expectValidation(await postDocument(service, basic, { title: 'x' }, { file }), {
      file: [TOO_LARGE_BASIC],
    });
    expect((await postDocument(service, business, { title: 'x' }, { file })).status).toBe(201);
    const over = await makePdfOfSize(2 * MB + 1);
    await expectValidation(await postDocument(service, business, { title: 'x' }, { file: over }), {
      file: ['The file is larger than the 2 MB limit of the business plan; upload a smaller PDF.'],
    });
  });

  it('refuses a 50 MB stream early, without reading it all, and keeps nothing', async () => {
    const rows = await documentsOf(basic);
    const files = await service.storedFiles();
    const result = await streamUpload(basic, 50 * MB);
    expect(result.status).toBe(422);
    expect(JSON.parse(result.body)).toEqual({
      success: false,
      error: {
        code: 422,
        type: 'validation_failed',
        message: 'Validation failed',
        details: { file: [TOO_LARGE_BASIC] },
      },
    });
    // The answer came while most of the body was still unsent.
    expect(result.sentWhenAnswered).toBeLessThan(20 * MB); // 1 MB read plus what the socket buffers hold
    expect(result.total).toBeGreaterThan(50 * MB);
    expect(await documentsOf(basic)).toBe(rows);
    expect(await service.storedFiles()).toEqual(files);
    expect(await tempFiles()).toEqual([]);
  });

  it('refuses a declared Content-Length clearly over the limit before reading the body', async () => {
    const result = await streamUpload(basic, 50 * MB, { declareLength: 50 * MB + 300 });
    expect(result.status).toBe(422);
    expect(result.sentWhenAnswered).toBeLessThan(20 * MB); // 1 MB read plus what the socket buffers hold
    expect(JSON.parse(result.body)).toMatchObject({ error: { details: { file: [TOO_LARGE_BASIC] } } });
    expect(await tempFiles()).toEqual([]);
  });

  it('still serves the next request after refusing one', async () => {
    expect((await service.request('/documents', { account: basic })).status).toBe(200);
  });
});

describe('file checks', () => {
  it.each([
    ['an encrypted PDF', 'encrypted', 'The PDF is encrypted; upload it without a password.'],
    ['a text file named .pdf', 'not-a-pdf', 'The file is not a PDF (it does not start with %PDF-).'],
    ['a truncated PDF', 'truncated', 'The PDF is truncated or damaged and could not be read.'],
  ] as const)('%s is a 422 on file, and nothing is kept', async (_label, fixture, message) => {
    const rows = await documentsOf(business);
    const files = await service.storedFiles();
    const res = await postDocument(
      service,
      business,
      { title: 'x' },
      { file: await readFixture(fixture), filename: 'contract.pdf' },
    );
    await expectValidation(res, { file: [message] });
    expect(await documentsOf(business)).toBe(rows);
    expect(await service.storedFiles()).toEqual(files);
  });

  it('an empty file is refused; file problems come with field problems', async () => {
    await expectValidation(
      await postDocument(service, business, { department: 'X' }, { file: new Uint8Array() }),
      {
        title_ar: ['title_ar is required unless title is given (one title for both languages)'],
        title_en: ['title_en is required unless title is given (one title for both languages)'],
        department: ['department must be a lowercase key: a letter, then up to 31 letters, digits, _ or -'],
        file: ['The file is not a PDF (it does not start with %PDF-).'],
      },
    );
  });

  it('only one file, in the part named file', async () => {
    const form = new FormData();
    form.append('title', 'x');
    form.append('file', new Blob([await makePdf(1)]), 'a.pdf');
    form.append('attachment', new Blob([await makePdf(1)]), 'b.pdf');
    const res = await service.request('/documents', { method: 'POST', account: business, body: form });
    await expectValidation(res, { attachment: ['Only one file may be uploaded, in the field named "file"'] });
  });
});
