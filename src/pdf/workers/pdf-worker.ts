/**
 * The code a PDF worker thread runs (loaded by piscina from pdf-workers.ts; it exports one function per task).
 * Errors the caller must tell apart cross the thread boundary as plain data, since structured cloning keeps only
 * the message of an Error.
 */
import type { MessagePort } from 'node:worker_threads';
import { FinalizeInputError } from '../compose/marks.ts';
import { type ComposeTask, type ComposedFinal, FinalizeError, composeFinal } from '../finalize-document.ts';
import { type PdfInspection, inspectPdf } from '../inspect-pdf.ts';
import type { DecodeLimits } from '../limits.ts';

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
