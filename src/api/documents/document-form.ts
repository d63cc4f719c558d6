import { inspectPdf } from '../../pdf/inspect-pdf.ts';
import { addDetail, mergeDetails, type ErrorDetails } from '../../errors.ts';
import type { DocumentFile } from '../../documents/inputs.ts';
import type { AppContext } from '../../http/context.ts';
import { idempotencyOf, requestFingerprint } from '../middleware/idempotency.ts';
import { formFieldsToObject } from './form-fields.ts';
import type { ReceivedUpload } from './upload.ts';

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
  options: { fileRequired: boolean },
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
  const inspection = await inspectPdf(upload.file.bytes);
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
