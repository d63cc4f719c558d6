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
    expect(await service.storedFiles()).toEqual([]);
  });
});
