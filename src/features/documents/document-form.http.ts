import { addDetail, AppError, mergeDetails, type ErrorDetails } from '../../errors.ts';
import type { PdfInspection } from '../../pdf/inspect-pdf.ts';
import { PdfBusyError, type PdfInspector } from '../../pdf/workers/pdf-workers.ts';
import type { DocumentFile } from './inputs.ts';
import type { AppContext } from '../../http/context.ts';
import { idempotencyOf, requestFingerprint } from '../../api/middleware/idempotency.ts';
import { formFieldsToObject } from './form-fields.ts';
import type { ReceivedUpload } from './upload.http.ts';

/**
 * What a multipart document request carried, ready for the schemas: the fields as an object, the file checked
 * (a PDF that parses, not encrypted, within the page bound), and every problem found so far keyed by field.
 */
export interface DocumentForm {
  /** The fields by name, in an object without a prototype (see `formFieldsToObject`). */
  value: Record<string, unknown>;
  /** Set when the file passed the checks. */
  file?: DocumentFile;
  /** Where the received file was stored, checked or not: the caller removes it if the request fails. */
  storedKey?: string;
  details: ErrorDetails;
}

export async function readDocumentForm(
  ctx: AppContext,
  upload: ReceivedUpload,
  options: { fileRequired: boolean; pdf: PdfInspector },
): Promise<DocumentForm> {
  // The body is known only now: claim the Idempotency-Key (if any) before anything is written.
  const fields = [...upload.fields].sort(([a, av], [b, bv]) =>
    a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0,
  );
  const file = upload.file && {
    name: upload.file.filename,
    size: upload.file.size,
    sha256: upload.file.sha256,
  };
  await idempotencyOf(ctx)?.begin(requestFingerprint(ctx.method, ctx.path, { fields, file: file ?? null }));

  const form = formFieldsToObject(upload.fields);
  const details = mergeDetails(upload.errors, form.errors);
  if (!upload.file) {
    if (options.fileRequired) addDetail(details, 'file', 'A PDF is required in the part named "file"');
    return { value: form.value, details };
  }
  const storedKey = upload.file.key;
  const inspection = await inspectUpload(options.pdf, upload.file.bytes);
  if (!inspection.ok) {
    addDetail(details, 'file', inspection.reason);
    return { value: form.value, details, storedKey };
  }
  return {
    value: form.value,
    details,
    storedKey,
    file: {
      key: upload.file.key,
      name: upload.file.filename,
      size: upload.file.size,
      sha256: upload.file.sha256,
      pageCount: inspection.pageCount,
    },
  };
}

/**
 * The file is read in a worker thread. When every inspection thread is busy, an account below its share of them
 * waits for the next free one; an account at its share is refused at once with 503 and Retry-After, so its slow
 * files never queue up in front of other accounts' (pdf/workers/fair-slots.ts).
 */
async function inspectUpload(inspector: PdfInspector, bytes: Uint8Array): Promise<PdfInspection> {
  try {
    return await inspector.inspect(bytes);
  } catch (err) {
    if (!(err instanceof PdfBusyError)) throw err;
    const seconds = err.retryAfterSeconds;
    throw new AppError(
      'service_unavailable',
      `Too many of this account's PDFs are being checked right now; try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
      {},
      { 'Retry-After': String(seconds) },
    );
  }
}
