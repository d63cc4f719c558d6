import type { Knex } from '../../db/knex.ts';
import { isoTime } from '../../domain/time.ts';
import { AppError } from '../../errors.ts';
import { documentsStore, openFinalToken, type Document, type DocumentSignature } from './documents-store.ts';
import { finalFilename, finalFileUrl } from './final-file.ts';
import type { RotateDownloadDeps } from './rotate-download.ts';
import { statusRefusal } from './rules.ts';

/** Where an approved document's signed PDF is (docs/product-rules.md §6), as the API shows it. */
export interface DocumentDownload {
  download_url: string;
  expires_at: string;
  filename: string;
  signature: DocumentSignature | null;
}

export function downloadOf(document: Document, downloadUrl: string): DocumentDownload {
  return {
    download_url: downloadUrl,
    expires_at: isoTime(document.expiresAt),
    filename: finalFilename(document),
    signature: document.signature,
  };
}

/** The permanent URL of the account's approved document: 404 for none, 409 naming any other status. */
export async function currentDownload(
  deps: RotateDownloadDeps,
  accountId: string,
  id: string,
): Promise<DocumentDownload> {
  const document = await documentsStore(deps.db).findById(accountId, id);
  if (!document) throw AppError.notFound('Document');
  if (document.status !== 'approved') {
    throw AppError.conflict(
      'not_approved',
      statusRefusal(document, 'only an approved document can be downloaded.'),
    );
  }
  const token = openFinalToken(document, deps.secrets);
  // Finalization stores the file before the document becomes approved, so this is only a safety net.
  if (!token || !document.finalSha256) {
    throw new AppError('service_unavailable', 'The signed PDF of this document is not available.');
  }
  return downloadOf(document, finalFileUrl(deps.publicBaseUrl, token, document));
}

/** `randomToken(32)`: 43 base64url characters; anything else names no file and costs no query. */
const TOKEN = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * The signed PDF a public URL names: the document its token belongs to (`documentId`, for the logs, whenever there is
 * one) and its stored file, only while the document is approved, the token is its current one and `filename` is the
 * file's name. The token is looked up by its SHA-256.
 */
export async function publicFinalFile(
  db: Knex,
  token: string,
  filename: string,
): Promise<{ documentId: string; file?: { key: string; sha256: string; filename: string } } | undefined> {
  const document = TOKEN.test(token) ? await documentsStore(db).findByFinalToken(token) : undefined;
  if (!document) return undefined;
  const { finalSha256, finalFileKey } = document;
  // Until final_sha256 is set the file may still be being written.
  if (
    document.status !== 'approved' ||
    !finalSha256 ||
    !finalFileKey ||
    filename !== finalFilename(document)
  ) {
    return { documentId: document.id };
  }
  return { documentId: document.id, file: { key: finalFileKey, sha256: finalSha256, filename } };
}
