import type { Config } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import { createPdfInspector } from '../../pdf/workers/pdf-workers.ts';
import type { Storage } from '../../storage/storage.ts';
import { authOf, type AppContext } from '../../http/context.ts';
import { readDocumentForm, type DocumentForm } from './document-form.http.ts';
import { createUploadGate } from './upload-gate.ts';
import { lingerAndClose, receiveUpload } from './upload.http.ts';

/**
 * Receives a multipart form carrying a PDF (a document's, a template's): admitted by the upload gate, streamed to
 * storage under `fileKey` within the plan's limit, the PDF inspected in a worker thread. Uploaded PDFs are
 * inspected at most PDF_MAX_CONCURRENT_INSPECTIONS at once, shared fairly by accounts; uploads in flight are
 * capped in all and per account (docs/security.md, "Fair shares"). `discard` removes a stored file after a
 * refusal.
 */
export function createFormReceiver(deps: { config: Config; logger: Logger; storage: Storage }) {
  const pdf = createPdfInspector(deps.config.pdf, deps.logger);
  const uploads = createUploadGate(deps.config.fairShares);

  const discard = async (key: string | undefined) => {
    if (!key) return;
    await deps.storage
      .delete(key)
      .catch((err: unknown) => deps.logger.warn({ err, key }, 'could not remove a file'));
  };

  const receive = async (ctx: AppContext, fileKey: string, fileRequired: boolean): Promise<DocumentForm> => {
    const { accountId, plan } = authOf(ctx);
    let leave: () => void;
    try {
      leave = uploads.enter(accountId);
    } catch (err) {
      lingerAndClose(ctx); // the body was not read: let the client read the 503 rather than a reset
      throw err;
    }
    try {
      const upload = await receiveUpload(ctx, {
        storage: deps.storage,
        fileKey,
        maxFileBytes: deps.config.plans[plan].maxUploadBytes,
        plan,
      });
      try {
        return await readDocumentForm(ctx, upload, { fileRequired, pdf: pdf.forAccount(accountId) });
      } catch (err) {
        await discard(upload.file?.key);
        throw err;
      }
    } finally {
      leave();
    }
  };

  return { receive, discard };
}
