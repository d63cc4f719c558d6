import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PDF_LIMITS, type PdfLimits, PdfTooComplexError } from '../../src/pdf/limits.ts';
import {
  PdfBusyError,
  PdfTaskCancelledError,
  createPdfFinalizer,
  createPdfInspector,
} from '../../src/pdf/workers/pdf-workers.ts';
import { SOON_ROUNDS } from '../../src/pdf/workers/fair-slots.ts';
import { PDF_THREAD_NAME } from '../../src/pdf/workers/thread-name.ts';
import { NICE_INCREMENT } from '../../src/pdf/workers/thread-priority.ts';
import type { FinalizeResult } from '../../src/pdf/types.ts';
import { buildPdf, deflated, objectStreamBomb } from '../helpers/pdf-bombs.ts';
import { makePdf } from '../helpers/pdf.ts';
import { pdfsig } from '../helpers/pdf-tools.ts';
import { type TestPki, createTestPki } from '../helpers/pki.ts';
import { sampleApprovers, sampleInput } from '../helpers/sample-input.ts';

const GiB = 1024 * 1024 * 1024;

/**
 * Each test builds its own limits, so each gets a pool of its own (pools are shared per set of limits). A time
 * limit runs from the task's start in its thread (not the thread's own start-up).
 */
function limits(
  inspection: Partial<PdfLimits['inspection']>,
  decode: Partial<PdfLimits['decode']> = {},
): PdfLimits {
  return {
    ...DEFAULT_PDF_LIMITS,
    decode: { ...DEFAULT_PDF_LIMITS.decode, ...decode },
    inspection: { ...DEFAULT_PDF_LIMITS.inspection, ...inspection },
  };
}

/** Decoding limits loose enough that a bomb is inflated until the time limit stops it. */
const LOOSE = { maxDecodedBytes: 1024 * GiB, maxDecodeRatio: 1e9 };

/** A 64 GiB bomb (about 70 KB): inflating it through the counter takes far longer than any limit below. */
let slowBomb: Buffer;
let dir: string;
let pki: TestPki;
beforeAll(async () => {
  slowBomb = objectStreamBomb(64 * GiB);
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-workers-'));
  pki = await createTestPki(path.join(dir, 'pki'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('PDF inspection in a worker thread', () => {
  it('inspects an ordinary PDF, and refuses a bomb with the pre-scan reason', async () => {
    const inspector = createPdfInspector(limits({ timeoutMs: 60_000, memoryMb: 250 }));
    expect(await inspector.inspect(await makePdf(2))).toEqual({ ok: true, pageCount: 2, signed: false });
    const bomb = await inspector.inspect(objectStreamBomb());
    expect(bomb.ok).toBe(false);
    expect(!bomb.ok && bomb.reason).toMatch(/^The PDF expands to more than/);
  });

  it.runIf(process.platform === 'linux')(
    'runs its tasks in a thread named wathiq-pdf, at a lower CPU priority than the event loop (nice +10), from its own /proc entry',
    async () => {
      const inspector = createPdfInspector(limits({ timeoutMs: 60_000, memoryMb: 252 }));
      const niceOf = async (task: string) => {
        // /proc/<pid>/task/<tid>/stat: the command (in parentheses, may hold spaces), then field 19 is the nice value.
        const stat = await readFile(`/proc/self/task/${task}/stat`, 'utf8').catch(() => '');
        return stat ? Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) : undefined;
      };
      const mine = await niceOf(String(process.pid));
      // Files share this process: threads of other files' pools may be alive, so only threads new since here count.
      const before = new Set(await readdir('/proc/self/task'));
      expect(await inspector.inspect(await makePdf(1))).toMatchObject({ ok: true });
      // The thread stays a while once idle; one of the new threads runs 10 below the main thread.
      const started = (await readdir('/proc/self/task')).filter((t) => !before.has(t));
      const threads = await Promise.all(
        started.map(async (task) => ({
          name: (await readFile(`/proc/self/task/${task}/comm`, 'utf8').catch(() => '')).trim(),
          nice: await niceOf(task),
        })),
      );
      expect(mine).toBeTypeOf('number');
      expect(threads).toContainEqual({ name: PDF_THREAD_NAME, nice: mine! + NICE_INCREMENT });
      expect(NICE_INCREMENT).toBe(10);
      expect(PDF_THREAD_NAME).toBe('wathiq-pdf');
    },
  );

  it('terminates a thread past the time limit: the file is too complex, and the pool goes on', async () => {
    const inspector = createPdfInspector(limits({ timeoutMs: 4000, memoryMb: 251 }, LOOSE));
    expect(await inspector.inspect(slowBomb)).toEqual({
      ok: false,
      reason:
        'The PDF is too complex to process: reading it took longer than 4 seconds. Simplify it or save it again with a standard PDF tool.',
    });
    expect(await inspector.inspect(await makePdf(1))).toMatchObject({ ok: true, pageCount: 1 });
  });

  it('terminates a thread past the heap limit: the file is too complex', async () => {
    // 4 MB of literal string decode from a 5 KB object stream; pdf-lib builds it a character at a time.
    const content = Buffer.concat([
      Buffer.from('100 0 ('),
      Buffer.alloc(4 * 1024 * 1024, 'a'),
      Buffer.from(')'),
    ]);
    const pdf = buildPdf([
      { dict: '/Type /ObjStm /N 1 /First 6 /Filter /FlateDecode', data: deflated(content) },
    ]);
    const inspector = createPdfInspector(limits({ timeoutMs: 120_000, memoryMb: 32 }, LOOSE));
    expect(await inspector.inspect(pdf)).toEqual({
      ok: false,
      reason:
        'The PDF is too complex to process: reading it needed more than 32 MB of memory. Simplify it or save it again with a standard PDF tool.',
    });
  });

  it('refuses at once past its concurrency (PdfBusyError) rather than queueing', async () => {
    const inspector = createPdfInspector(limits({ concurrency: 1, timeoutMs: 3000, memoryMb: 252 }, LOOSE));
    const first = inspector.inspect(slowBomb);
    const second = await inspector.inspect(await makePdf(1)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(PdfBusyError);
    expect(second).toMatchObject({ retryAfterSeconds: 1 });
    const slow = await first;
    expect(!slow.ok && slow.reason).toMatch(/too complex/);
  });

  it('queues another account for the next thread while the account holding it is refused', async () => {
    const inspector = createPdfInspector(limits({ concurrency: 1, timeoutMs: 3000, memoryMb: 253 }, LOOSE));
    const order: string[] = [];
    const run = (account: string, file: Uint8Array, name: string) =>
      inspector
        .forAccount(account)
        .inspect(file)
        .then(
          (r) => (order.push(`${name} ${r.ok ? 'ok' : 'refused'}`), r),
          (e: unknown) => (order.push(`${name} ${e instanceof PdfBusyError ? 'busy' : 'failed'}`), e),
        );
    const bomb = run('a', slowBomb, 'a1');
    await new Promise((r) => setTimeout(r, 200));
    const other = run('b', await makePdf(1), 'b1');
    await run('a', await makePdf(1), 'a2');
    await Promise.all([bomb, other]);
    expect(order).toEqual(['a2 busy', 'a1 refused', 'b1 ok']);
  });
});

describe('finalization in a worker thread', () => {
  const finalizeLimits = (over: Partial<PdfLimits['finalization']>): PdfLimits => ({
    ...DEFAULT_PDF_LIMITS,
    finalization: { ...DEFAULT_PDF_LIMITS.finalization, ...over },
  });

  it('composes in the thread and signs here; past its concurrency a finalization waits its turn', async () => {
    const finalizer = createPdfFinalizer(finalizeLimits({ concurrency: 1, timeoutMs: 120_001 }));
    const original = await makePdf(2);
    const results = await Promise.all(
      [2, 3].map((n) => finalizer.finalize(sampleInput(original, pki.signer, sampleApprovers(n)))),
    );
    for (const [i, result] of results.entries()) {
      const file = path.join(dir, `final-${i}.pdf`);
      await writeFile(file, result.pdf);
      const { signatures, output } = pdfsig(file, pki.nssDir);
      expect(signatures, output).toHaveLength(1);
      expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: true });
    }
  });

  it('a finalization that takes its thread soon is refused (PdfBusyError) behind SOON_ROUNDS full rounds, and waits behind less', async () => {
    const finalizer = createPdfFinalizer(finalizeLimits({ concurrency: 1, timeoutMs: 120_003 }));
    const original = await makePdf(1);
    const input = () => sampleInput(original, pki.signer, sampleApprovers(1));
    const holding = finalizer.finalize(input());
    const soon: Promise<FinalizeResult>[] = [];
    for (let i = 0; i < SOON_ROUNDS; i++) {
      expect(finalizer.hasRoomSoon()).toBe(true);
      soon.push(finalizer.finalize(input(), { whenBusy: 'soon' })); // behind fewer rounds: waits for the thread
    }
    expect(finalizer.hasRoomSoon()).toBe(false);
    await expect(finalizer.finalize(input(), { whenBusy: 'soon' })).rejects.toBeInstanceOf(PdfBusyError);
    const waited = finalizer.finalize(input(), { whenBusy: 'wait' });
    for (const done of [holding, ...soon, waited]) expect((await done).pdf.length).toBeGreaterThan(0);
    expect(finalizer.hasRoomSoon()).toBe(true);
  });

  it('a finalization admitted to take its thread soon waits its turn however long the queue has grown since', async () => {
    const finalizer = createPdfFinalizer(finalizeLimits({ concurrency: 1, timeoutMs: 120_004 }));
    const original = await makePdf(1);
    const input = () => sampleInput(original, pki.signer, sampleApprovers(1));
    const admission = finalizer.admitSoon(); // kept while it would read and reserve
    const holding = finalizer.finalize(input()); // takes the thread
    // The rounds fill behind it.
    const waiting = Array.from({ length: SOON_ROUNDS }, () =>
      finalizer.finalize(input(), { whenBusy: 'wait' }),
    );
    expect(finalizer.hasRoomSoon()).toBe(false);
    expect(() => finalizer.admitSoon()).toThrow(PdfBusyError);
    await expect(finalizer.finalize(input(), { whenBusy: 'soon' })).rejects.toBeInstanceOf(PdfBusyError);
    const admitted = finalizer.finalize(input(), { whenBusy: 'soon', admission }); // not refused: it waits
    for (const done of [holding, ...waiting, admitted]) expect((await done).pdf.length).toBeGreaterThan(0);
    admission.cancel(); // taken already: changes nothing
    expect(finalizer.hasRoomSoon()).toBe(true);
  });

  it('takes waiting finalizations account by account, not in the order they came', async () => {
    const finalizer = createPdfFinalizer(finalizeLimits({ concurrency: 1, timeoutMs: 120_002 }));
    const original = await makePdf(1);
    const done: string[] = [];
    const run = (account: string, name: string) =>
      finalizer
        .forAccount(account)
        .finalize(sampleInput(original, pki.signer, sampleApprovers(1)))
        .then(() => done.push(name));
    // a's first holds the thread; a's next two wait, then b's one: b goes before a's second.
    await Promise.all([run('a', 'a1'), run('a', 'a2'), run('a', 'a3'), run('b', 'b1')]);
    expect(done).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('a finalization whose caller gives up while it composes has its thread stopped, and the pool goes on', async () => {
    const finalizer = createPdfFinalizer({
      ...finalizeLimits({ concurrency: 1, timeoutMs: 120_006 }),
      decode: { ...DEFAULT_PDF_LIMITS.decode, ...LOOSE },
    });
    const controller = new AbortController();
    const started = performance.now();
    const composing = finalizer
      .finalize(sampleInput(slowBomb, pki.signer, sampleApprovers(1)), {
        whenBusy: 'soon',
        signal: controller.signal,
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await new Promise((r) => setTimeout(r, 1500)); // inflating the bomb, which would take past the time limit
    controller.abort();
    expect(await composing).toBeInstanceOf(PdfTaskCancelledError);
    expect(performance.now() - started).toBeLessThan(60_000);
    // The one thread is free again, and composes the next file.
    const next = await finalizer.finalize(sampleInput(await makePdf(1), pki.signer, sampleApprovers(1)));
    expect(next.pdf.length).toBeGreaterThan(0);
  });

  it('a finalization past its time limit fails with PdfTooComplexError', async () => {
    const finalizer = createPdfFinalizer(finalizeLimits({ timeoutMs: 1 }));
    const err = await finalizer.finalize(sampleInput(await makePdf(1), pki.signer, sampleApprovers(1))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PdfTooComplexError);
    expect(err).toMatchObject({ limit: 'time' });
  });
});
