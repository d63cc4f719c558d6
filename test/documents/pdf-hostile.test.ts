import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelope } from '../../src/api/schemas/envelopes.ts';
import { longFilterChainPdf, objectStreamBomb } from '../helpers/pdf-bombs.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  documentOf,
  expectValidation,
  postDocument,
  startDocumentsService,
  type DocumentsService,
} from './support.ts';

const GiB = 1024 * 1024 * 1024;

/** Uploads with the default limits: bombs are refused by the pre-scan, ordinary files accepted. */
describe('hostile PDFs at upload, default limits', () => {
  let service: DocumentsService;
  let account: TestAccount;
  beforeAll(async () => {
    service = await startDocumentsService();
    account = await service.createAccount();
  });
  afterAll(() => service.close());

  it('a 1 KB object stream that inflates twice to 256 MB is a 422 on file saying why; nothing is kept', async () => {
    const bomb = objectStreamBomb();
    expect(bomb.length).toBeLessThan(1500);
    const files = await service.storedFiles();
    const res = await postDocument(service, account, { title: 'Bomb' }, { file: bomb });
    const budget = `${Math.floor((16 * bomb.length) / 1024)}`;
    const body = ErrorEnvelope.parse(await res.clone().json());
    expect(body.error.details.file?.[0]).toMatch(
      new RegExp(
        `^The PDF expands to more than ${budget}(\\.\\d+)? KB when decompressed; at most 16 times its size`,
      ),
    );
    await expectValidation(res, { file: body.error.details.file ?? [] });
    expect(await service.storedFiles()).toEqual(files);
  });

  it('a long filter chain is a 422 on file', async () => {
    await expectValidation(
      await postDocument(service, account, { title: 'Chain' }, { file: longFilterChainPdf(6) }),
      {
        file: ['The PDF has a stream compressed with 6 filters in a row; at most 2 are accepted.'],
      },
    );
  });

  it('an ordinary PDF with object streams is accepted', async () => {
    const res = await postDocument(service, account, { title: 'Ordinary' }, { file: await makePdf(3) });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(documentOf(await res.json()).page_count).toBe(3);
  });
});

/**
 * One inspection at a time, a time limit of 3 seconds, and decoding limits loose enough that a 64 GiB bomb is
 * inflated (into a counter) until the time limit stops it: an inspection that is certainly still running.
 */
describe('hostile PDFs at upload, one inspection at a time', () => {
  let service: DocumentsService;
  let account: TestAccount;
  let slowBomb: Buffer;
  beforeAll(async () => {
    service = await startDocumentsService({
      PDF_MAX_CONCURRENT_INSPECTIONS: '1',
      PDF_WORKER_TIMEOUT_MS: '3000',
      PDF_MAX_DECODED_MB: String(1024 * 1024),
      PDF_MAX_DECODE_RATIO: '1000000000',
    });
    account = await service.createAccount();
    slowBomb = objectStreamBomb(64 * GiB);
  });
  afterAll(() => service.close());

  const TOO_SLOW =
    'The PDF is too complex to process: reading it took longer than 3 seconds. Simplify it or save it again with a standard PDF tool.';

  it('past PDF_MAX_CONCURRENT_INSPECTIONS an upload is a 503 with Retry-After; /health answers meanwhile', async () => {
    const order: string[] = [];
    const upload = (name: string) =>
      postDocument(service, account, { title: name }, { file: slowBomb }).then((res) => {
        order.push(`${name} ${res.status}`);
        return res;
      });
    // Two bombs at once: the first to arrive holds the one inspection slot for 3 seconds, the other is refused
    // as soon as it arrives, not queued behind it.
    const uploads = [upload('a'), upload('b')];
    const busy = await Promise.race(uploads);
    expect(busy.status, await busy.clone().text()).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(ErrorEnvelope.parse(await busy.json()).error).toEqual({
      code: 503,
      type: 'service_unavailable',
      message: "Too many of this account's PDFs are being checked right now; try again in 1 second.",
      details: {},
    });

    // The other bomb is being inspected now; the health check does not wait for it.
    const health = await service.request('/health');
    order.push(`health ${health.status}`);
    expect(health.status).toBe(200);

    const [a, b] = await Promise.all(uploads);
    const inspected = busy === a ? b! : a!;
    await expectValidation(inspected, { file: [TOO_SLOW] });
    expect(order).toEqual([
      expect.stringMatching(/^[ab] 503$/),
      'health 200',
      expect.stringMatching(/^[ab] 422$/),
    ]);

    // The slot is free again: the next upload is inspected (and refused for its own reason).
    await expectValidation(
      await postDocument(service, account, { title: 'Next' }, { file: longFilterChainPdf(6) }),
      { file: ['The PDF has a stream compressed with 6 filters in a row; at most 2 are accepted.'] },
    );
  });
});
