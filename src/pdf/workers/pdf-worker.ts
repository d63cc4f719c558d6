/**
 * The code a PDF worker thread runs (loaded by piscina from pdf-workers.ts; it exports one function per task).
 * Errors the caller must tell apart cross the thread boundary as plain data, since structured cloning keeps only
 * the message of an Error.
 */
import type { MessagePort } from 'node:worker_threads';
import type { ComposeTask, ComposedFinal } from '../finalize-document.ts';
import { FinalizeError, FinalizeInputError } from '../finalize-errors.ts';
import { type PdfInspection, inspectPdf } from '../inspect-pdf.ts';
import type { DecodeLimits } from '../limits.ts';
import { PDF_THREAD_NAME, nameThisThread } from './thread-name.ts';
import { lowerThreadPriority } from './thread-priority.ts';

nameThisThread(PDF_THREAD_NAME);
await lowerThreadPriority();

/** Every task carries a port on which the thread says it has started it: the time limit runs from then. */
interface Started {
  started?: MessagePort;
}

function signalStart(task: Started): void {
  task.started?.postMessage('started');
  task.started?.close();
}

export interface InspectTask {
  bytes: Uint8Array;
  limits: DecodeLimits;
}

export type ComposeFailure =
  | { type: 'FinalizeError'; code: FinalizeError['code']; message: string }
  | { type: 'FinalizeInputError'; code: FinalizeInputError['code']; message: string };

export type ComposeOutcome = { ok: true; composed: ComposedFinal } | { ok: false; failure: ComposeFailure };

export function inspect(task: InspectTask & Started): Promise<PdfInspection> {
  signalStart(task);
  return inspectPdf(task.bytes, task.limits);
}

export async function compose(task: ComposeTask & Started): Promise<ComposeOutcome> {
  // The composer (its fonts and shaping) is loaded by a thread's first compose task, not when the thread starts: a
  // thread that only inspects uploads, as the API's do, starts in about half the time and memory. Loading counts as
  // starting, not against the file's time limit.
  const { composeFinal } = await import('../finalize-document.ts');
  signalStart(task);
  try {
    return { ok: true, composed: await composeFinal(task) };
  } catch (err) {
    if (err instanceof FinalizeError) {
      return { ok: false, failure: { type: 'FinalizeError', code: err.code, message: err.message } };
    }
    if (err instanceof FinalizeInputError) {
      return { ok: false, failure: { type: 'FinalizeInputError', code: err.code, message: err.message } };
    }
    throw err;
  }
}
