import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from '../../logger.ts';
import type { ComposeTask, ComposedFinal } from '../finalize-document.ts';
import { FinalizeError, FinalizeInputError } from '../finalize-errors.ts';
import type { PdfInspection } from '../inspect-pdf.ts';
import { LIMIT_REASONS, type PdfLimits, PdfTooComplexError, type WorkerLimits } from '../limits.ts';
import type { FinalizeInput, FinalizeResult } from '../types.ts';
import { FairSlots, type SoonAdmission } from './fair-slots.ts';
import type { ComposeOutcome, InspectTask } from './pdf-worker.ts';

export type { SoonAdmission };

/**
 * Untrusted PDFs are read in worker threads (piscina), never on the event loop: each task gets a thread of its
 * own with a V8 heap limit (`resourceLimits`) and a wall-clock limit after which its thread is terminated, and
 * the pre-scan inside bounds what decoding may allocate outside the heap (prescan.ts).
 *
 * The worker file sits beside this one: pdf-worker.js in the compiled dist/, where threads inherit the process's
 * options; pdf-worker.ts under tsx and vitest, where a thread needs TypeScript support of its own. tsx's own
 * `--import tsx` registers its hooks on the main thread only, so the thread imports tsx's ESM API and calls its
 * `register()` first (a data: URL passed with `--import`; tsx is a dependency).
 */
const here = fileURLToPath(import.meta.url);
export const PDF_WORKER_FILE = path.join(path.dirname(here), `pdf-worker${path.extname(here)}`);

function workerExecArgv(): string[] | undefined {
  if (!PDF_WORKER_FILE.endsWith('.ts')) return undefined;
  // The package's "import" entry of tsx/esm/api (require.resolve gives its CommonJS twin beside it).
  const api = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs');
  const boot = `import { register } from ${JSON.stringify(pathToFileURL(api).href)}; register();`;
  return ['--import', `data:text/javascript,${encodeURIComponent(boot)}`];
}

/** How long a thread may take to start and take up a task (a busy machine, TypeScript under tsx) before a 500. */
const THREAD_START_MS = 60_000;

/** Threads idle this long are stopped (a new one starts on the next task); idle threads never hold the process. */
const IDLE_THREAD_MS = 30_000;

/** Every inspection thread was busy and the account had its share of them: refused at once (503), not queued. */
export class PdfBusyError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Every PDF inspection thread is busy and the account holds or awaits its share of them');
    this.name = 'PdfBusyError';
  }
}

/** The task's caller gave up (its `signal` aborted) while it ran: its thread was stopped; not the file's doing. */
export class PdfTaskCancelledError extends Error {
  constructor() {
    super('The PDF task was cancelled by its caller');
    this.name = 'PdfTaskCancelledError';
  }
}

/** The young generation of a thread whose old generation may take `memoryMb`: an eighth of it, 4 to 16 MB. */
export const youngGenerationMb = (memoryMb: number): number =>
  Math.min(16, Math.max(4, Math.floor(memoryMb / 8)));

/** A piscina pool with at most `concurrency` tasks at once, each limited in time and heap, shared by accounts. */
class PdfWorkerPool {
  private readonly piscina: Piscina;
  private readonly slots: FairSlots;
  private threadFailure: unknown;

  constructor(
    private readonly limits: WorkerLimits,
    logger: Pick<Logger, 'error'> | undefined,
  ) {
    this.slots = new FairSlots(limits.concurrency);
    this.piscina = new Piscina({
      filename: PDF_WORKER_FILE,
      minThreads: 0,
      maxThreads: limits.concurrency,
      idleTimeout: IDLE_THREAD_MS,
      // The young generation is bounded too (V8's default lets it grow to tens of MB per thread, on top of the
      // old generation's limit): a thread's heap is about memoryMb, whatever the file does.
      resourceLimits: {
        maxOldGenerationSizeMb: limits.memoryMb,
        maxYoungGenerationSizeMb: youngGenerationMb(limits.memoryMb),
      },
      execArgv: workerExecArgv(),
      // Not piscina's niceIncrement, which lowers a thread's priority before it loads its code: a thread lowers its
      // own once loaded (pdf-worker.ts), so its start-up is not starved on a busy machine while its tasks are.
    });
    // A thread that fails with no task of its own (one that could not start, or one whose task had already ended,
    // as when a terminated thread ran out of memory on its way out): piscina reports it here, where unheard the
    // 'error' event would end the process. A task no thread could start ends at THREAD_START_MS as a server error.
    this.piscina.on('error', (err: unknown) => {
      this.threadFailure = err;
      logger?.error({ err }, 'a PDF worker thread failed');
    });
  }

  /** Whether a `soon` task would be admitted now (FairSlots.hasRoomSoon). */
  hasRoomSoon(): boolean {
    return this.slots.hasRoomSoon();
  }

  /** A place for a `soon` task, kept while it prepares (FairSlots.admitSoon); undefined when refused. */
  admitSoon(): SoonAdmission | undefined {
    return this.slots.admitSoon();
  }

  /**
   * Queued fairly per `account` (see FairSlots). `share`: throw PdfBusyError when every slot is taken and the
   * account already holds or awaits its share; `wait`: wait for a slot; `soon`: throw PdfBusyError unless a slot is
   * free or the queue is shorter than SOON_ROUNDS rounds (FairSlots.takeSoon), or when `signal` aborts the wait; with
   * `admission`, it waits however long the queue has grown since it was admitted (FairSlots.admitSoon). `signal`
   * aborting while the task runs stops its thread (PdfTaskCancelledError), so no thread works on for nobody. The time
   * limit starts when the task starts in its thread (the thread says so through `started`), so a thread's start-up
   * (loading pdf-lib, and TypeScript under tsx) is not counted against the file; starting may take up to
   * THREAD_START_MS.
   */
  async run<T>(
    name: 'inspect' | 'compose',
    task: object,
    whenBusy: WhenBusy,
    account: string,
    signal?: AbortSignal,
    admission?: SoonAdmission,
  ): Promise<T> {
    const taken =
      whenBusy !== 'soon'
        ? await this.slots.take(account, whenBusy === 'share')
        : admission
          ? await admission.take(account, signal)
          : await this.slots.takeSoon(account, signal);
    if (!taken) throw new PdfBusyError(1);
    let cancelled = false;
    const controller = new AbortController();
    const cancel = () => {
      cancelled = true;
      controller.abort();
    };
    signal?.addEventListener('abort', cancel, { once: true });
    const { port1, port2 } = new MessageChannel();
    let limit: 'start' | 'time' = 'start';
    let timer = setTimeout(() => controller.abort(), THREAD_START_MS);
    port1.once('message', () => {
      clearTimeout(timer);
      limit = 'time';
      timer = setTimeout(() => controller.abort(), this.limits.timeoutMs);
    });
    try {
      if (signal?.aborted) throw new PdfTaskCancelledError();
      return (await this.piscina.run(
        { ...task, started: port2 },
        { name, signal: controller.signal, transferList: [port2] },
      )) as T;
    } catch (err) {
      if (cancelled) throw new PdfTaskCancelledError();
      if (controller.signal.aborted && limit === 'start') {
        // Not the file's doing: no thread could start (its last failure, if any, says why).
        throw new Error(`no PDF worker thread started the task within ${THREAD_START_MS} ms`, {
          cause: this.threadFailure,
        });
      }
      if (controller.signal.aborted) {
        throw new PdfTooComplexError('time', LIMIT_REASONS.tooSlow(this.limits.timeoutMs));
      }
      if ((err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new PdfTooComplexError('memory', LIMIT_REASONS.tooLarge(this.limits.memoryMb));
      }
      throw err;
    } finally {
      signal?.removeEventListener('abort', cancel);
      clearTimeout(timer);
      port1.close();
      this.slots.release(account);
    }
  }
}

/**
 * One pool per set of limits in a process (`inspect` and `compose` tasks may share one), so the concurrency bound
 * holds for the process however many apps or finalizers it builds (tests build many). Idle threads stop by
 * themselves and never keep the process alive, so a pool needs no closing.
 */
const pools = new Map<string, PdfWorkerPool>();

function poolFor(limits: WorkerLimits, logger: Pick<Logger, 'error'> | undefined): PdfWorkerPool {
  const key = `${limits.concurrency}/${limits.timeoutMs}/${limits.memoryMb}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new PdfWorkerPool(limits, logger);
    pools.set(key, pool);
  }
  return pool;
}

/** Upload-time inspection (API process). */
export interface PdfInspector {
  /**
   * `inspectPdf` in a worker thread. A file that exhausts the thread's time or memory is refused like any other
   * (`ok: false` with the reason); throws PdfBusyError when `inspection.concurrency` inspections are running and
   * this inspector's account already holds or awaits its share of them.
   */
  inspect(bytes: Uint8Array): Promise<PdfInspection>;
  /** The same inspector, its files queued as `account`'s (the inspector itself counts as one account). */
  forAccount(account: string): PdfInspector;
}

export function createPdfInspector(limits: PdfLimits, logger?: Pick<Logger, 'error'>): PdfInspector {
  const pool = poolFor(limits.inspection, logger);
  const forAccount = (account: string): PdfInspector => ({
    async inspect(bytes) {
      const task: InspectTask = { bytes, limits: limits.decode };
      try {
        return await pool.run<PdfInspection>('inspect', task, 'share', account);
      } catch (err) {
        if (err instanceof PdfTooComplexError) return { ok: false, reason: err.message };
        throw err;
      }
    },
    forAccount,
  });
  return forAccount('');
}

/** What a task does when every thread of its pool is busy: wait its turn, or be refused (PdfBusyError). */
type WhenBusy = 'share' | 'wait' | 'soon';

/**
 * How a finalization takes its thread: `wait` (the default) for its turn; `soon` only if one is free or will be
 * after at most SOON_ROUNDS rounds of the tasks waiting (else PdfBusyError), giving up its place (or stopping its
 * composition: PdfTaskCancelledError) when `signal` aborts;
 * `soon` with the `admission` PdfFinalizer.admitSoon gave before its reads, waiting its turn from that place.
 */
export interface FinalizeSlot {
  whenBusy?: 'wait' | 'soon';
  signal?: AbortSignal;
  admission?: SoonAdmission;
}

/** Finalization (Temporal worker process). */
export interface PdfFinalizer {
  /**
   * `finalizeDocument` with the original read in a worker thread (`composeFinal`); the signing, which holds the
   * private key and may call the time-stamp authority, stays in this thread. Throws what `finalizeDocument`
   * throws, PdfTooComplexError when the thread ran out of time or memory (permanent, like FinalizeError),
   * PdfBusyError when `slot.whenBusy` is `soon` and no thread is to be had soon, and PdfTaskCancelledError when
   * `slot.signal` aborts while it composes.
   */
  finalize(input: FinalizeInput, slot?: FinalizeSlot): Promise<FinalizeResult>;
  /** Whether a finalization taking its thread `soon` would be admitted now (admitSoon would not refuse). */
  hasRoomSoon(): boolean;
  /**
   * A place for a finalization taking its thread `soon`, kept from before the work it does ahead of composing
   * (its reads and reservations), so that once that work is done it is not refused for a queue grown meanwhile;
   * PdfBusyError, with no place kept, when hasRoomSoon is false. Pass it in `slot.admission`; cancel it if the
   * finalization ends without composing (cancelling one taken does nothing).
   */
  admitSoon(): SoonAdmission;
  /** The same finalizer, its work queued fairly as `account`'s behind other accounts' (the finalizer is one). */
  forAccount(account: string): PdfFinalizer;
}

export function createPdfFinalizer(limits: PdfLimits, logger?: Pick<Logger, 'error'>): PdfFinalizer {
  const pool = poolFor(limits.finalization, logger);
  const compose = async (task: ComposeTask, account: string, slot: FinalizeSlot): Promise<ComposedFinal> => {
    const outcome = await pool.run<ComposeOutcome>(
      'compose',
      task,
      slot.whenBusy ?? 'wait',
      account,
      slot.signal,
      slot.admission,
    );
    if (outcome.ok) return outcome.composed;
    const { failure } = outcome;
    if (failure.type === 'FinalizeError') throw new FinalizeError(failure.code, failure.message);
    throw new FinalizeInputError(failure.code, failure.message);
  };
  const forAccount = (account: string): PdfFinalizer => ({
    async finalize(input, slot = {}) {
      const { signer, ...rest } = input;
      const composed = await compose(
        {
          ...rest,
          // The identity only: the private key never leaves this thread.
          signer: { certificate: signer.certificate, chain: signer.chain, subject: signer.subject },
          limits: limits.decode,
        },
        account,
        slot,
      );
      // Loaded on first use: the API, which inspects uploads with this module too, never signs.
      const { signFinal } = await import('../finalize-document.ts');
      return signFinal(composed, input);
    },
    hasRoomSoon: () => pool.hasRoomSoon(),
    admitSoon() {
      const admission = pool.admitSoon();
      if (!admission) throw new PdfBusyError(1);
      return admission;
    },
    forAccount,
  });
  return forAccount('');
}
