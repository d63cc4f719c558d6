import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../helpers/test-service.ts';
import { makePdf } from '../helpers/pdf.ts';
import { startDocumentsService, type DocumentsService } from '../documents/support.ts';

let service: DocumentsService;
let account: TestAccount;
beforeAll(async () => {
  service = await startDocumentsService();
  account = await service.createAccount();
});
afterAll(() => service.close());

/** A multipart body built by hand: [name, value] fields (name undefined for a part without one), then the file. */
function form(fields: [string | undefined, string, string?][], pdf: Buffer, boundary = 'b0undary'): Buffer {
  const parts = fields.map(([name, value, type]) => {
    const disposition = name === undefined ? 'form-data' : `form-data; name="${name}"`;
    return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n${value}\r\n`;
  });
  return Buffer.concat([
    Buffer.from(parts.join('')),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
    pdf,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

const post = (body: Buffer) =>
  service.request('/documents', {
    method: 'POST',
    account,
    headers: { 'content-type': 'multipart/form-data; boundary=b0undary' },
    body,
  });

describe('the form of POST /documents as the OpenAPI document states it', () => {
  it('takes the approvers as one JSON part', async () => {
    const approvers = [
      { name: 'Sara', phone: '+966501234567', page: 1, x: 10, y: 20 },
      { name_ar: 'عمر', name_en: 'Omar', phone: '966551234567', action_type: 'approve_only' },
    ];
    const res = await post(
      form(
        [
          ['title', 'Contract'],
          ['approvers', JSON.stringify(approvers), 'application/json'],
        ],
        await makePdf(1),
      ),
    );
    const body = (await res.json()) as {
      data: { approvers: { name_en: string; order_index: number; page: number | null }[] };
    };
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.data.approvers.map((a) => [a.name_en, a.order_index, a.page])).toEqual([
      ['Sara', 1, 1],
      ['Omar', 2, null],
    ]);
  });

  it('ignores a part without a name (it was a 500), and refuses a field given twice', async () => {
    const pdf = await makePdf(1);
    expect(
      (
        await post(
          form(
            [
              ['title', 'Contract'],
              [undefined, 'stray'],
            ],
            pdf,
          ),
        )
      ).status,
    ).toBe(201);
    const twice = await post(
      form(
        [
          ['title', 'A'],
          ['title', 'B'],
        ],
        pdf,
      ),
    );
    expect(twice.status).toBe(422);
    expect(((await twice.json()) as { error: { details: unknown } }).error.details).toEqual({
      title: ['title must be a string'],
    });
  });
});

// Found by schemathesis: a part header the parser refuses, arriving after the file had been stored, destroyed the
// finished file stream with nobody listening, an uncaught exception that can end the process.
describe('a malformed part after the file', () => {
  it('is a 400, the server keeps answering, and nothing is kept', async () => {
    const boundary = 'b0undary';
    const pdf = await makePdf(1);
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nContract\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.pdf"\r\n` +
          'Content-Type: application/pdf\r\n\r\n',
      ),
      pdf,
      Buffer.from(
        `\r\n--${boundary}\r\nContent-Disposition: form-data; name="\x01bad"\r\n\r\nx\r\n--${boundary}--\r\n`,
      ),
    ]);
    const before = await service.storedFiles();
    const res = await service.request('/documents', {
      method: 'POST',
      account,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(res.status, await res.clone().text()).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /^Malformed multipart/,
    );
    // Give a stray stream error time to surface (vitest fails the run on an uncaught one).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await service.request('/health')).status).toBe(200);
    expect(await service.storedFiles()).toEqual(before);
  });
});
