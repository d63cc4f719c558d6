import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { objectStreamBomb } from '../helpers/pdf-bombs.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import { postDocument, startDocumentsService, type DocumentsService } from './support.ts';

const GiB = 1024 * 1024 * 1024;

/**
 * Two inspection threads, a 3-second limit, and decoding limits loose enough that a 64 GiB bomb is inflated (into a
 * counter) until the limit stops it: every bomb holds a thread for 3 seconds. Uploads in flight keep their defaults.
 */
const ENV = {
  PDF_MAX_CONCURRENT_INSPECTIONS: '2',
  PDF_WORKER_TIMEOUT_MS: '3000',
  PDF_MAX_DECODED_MB: String(1024 * 1024),
  PDF_MAX_DECODE_RATIO: '1000000000',
};

const FLOOD_WORKERS = 8;
const BUSY = "Too many of this account's PDFs are being checked right now; try again in 1 second.";

let service: DocumentsService;
let slowBomb: Buffer;
let ordinary: Uint8Array;
beforeAll(async () => {
  service = await startDocumentsService(ENV);
  slowBomb = objectStreamBomb(64 * GiB);
  ordinary = await makePdf(2);
});
afterAll(() => service.close());

/** The account and every further key it may have (10 in all, the default). */
async function accountWithKeys(): Promise<TestAccount[]> {
  const first = await service.createAccount();
  const keys = [first];
  for (let i = 1; i < service.config.fairShares.maxActiveKeys; i++) {
    const { apiKey, secret } = await issueApiKey(service.database.db, {
      accountId: first.accountId,
      name: `flood ${i}`,
    });
    keys.push({
      ...first,
      apiKeyId: apiKey.id,
      key: apiKey.key,
      authorization: `Bearer ${apiKey.key}:${secret}`,
    });
  }
  return keys;
}

/** Uploads an ordinary PDF and answers how long the 201 took, in ms. */
async function timedUpload(account: TestAccount, title: string): Promise<number> {
  const started = performance.now();
  const res = await postDocument(service, account, { title }, { file: ordinary });
  const elapsed = performance.now() - started;
  expect(res.status, await res.clone().text()).toBe(201);
  return elapsed;
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

describe('one account flooding the PDF checkers with slow files, through all its keys', () => {
  it("leaves another account's uploads accepted (its latency against an idle run is printed)", async () => {
    const flooder = await accountWithKeys();
    const other = await service.createAccount();
    const idle: number[] = [];
    for (let i = 0; i < 3; i++) idle.push(await timedUpload(other, `Idle ${i}`));

    const answers = new Map<string, number>();
    let stop = false;
    // Resolved by the flooder's next file turned away for its share: the flood then holds both threads.
    let sawShareFull = () => {};
    const nextShareFull = () => new Promise<void>((resolve) => (sawShareFull = resolve));
    let shareFull = nextShareFull();
    const flood = Array.from({ length: FLOOD_WORKERS }, async (_, worker) => {
      for (let n = 0; !stop; n++) {
        const key = flooder[(worker + n * FLOOD_WORKERS) % flooder.length]!;
        const res = await postDocument(service, key, { title: `Bomb ${worker}.${n}` }, { file: slowBomb });
        const body = (await res.json()) as { error?: { message: string } };
        const what = `${res.status} ${body.error?.message.slice(0, 48) ?? ''}`;
        answers.set(what, (answers.get(what) ?? 0) + 1);
        if (res.status === 503 && body.error?.message === BUSY) sawShareFull();
        if (res.status === 503 || res.status === 429) await new Promise((r) => setTimeout(r, 250));
      }
    });

    const flooded: number[] = [];
    try {
      // Each upload starts with the flood at full strength: after the previous one ended, both threads hold the
      // flooder's bombs again and its next file was turned away.
      for (let i = 0; i < 3; i++) {
        await shareFull;
        const upload = timedUpload(other, `Flooded ${i}`);
        flooded.push(await upload);
        shareFull = nextShareFull();
      }
    } finally {
      stop = true;
      await Promise.all(flood);
    }

    console.log(
      `another account's upload (ms): idle median ${median(idle).toFixed(0)} [${idle.map((t) => t.toFixed(0)).join(', ')}], ` +
        `under the flood median ${median(flooded).toFixed(0)} [${flooded.map((t) => t.toFixed(0)).join(', ')}] ` +
        `(${(median(flooded) / median(idle)).toFixed(1)}x); the flood's answers: ${JSON.stringify(Object.fromEntries(answers))}`,
    );
    // The flood got only refusals: its bombs as too complex (422) once inspected, the rest turned away.
    for (const what of answers.keys()) expect(what).toMatch(/^(422|503|429) /);
    expect([...answers.keys()].some((what) => what.startsWith('422 '))).toBe(true);
  });
});
