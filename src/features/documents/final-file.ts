import type { Document } from './documents-store.ts';

/**
 * Names of an approved document's signed file (docs/product-rules.md §6): its file name, its storage key and its
 * permanent public URL. The finalization activity, the download endpoint and the public file route share them.
 */

/** `<reference>.pdf`. */
export const finalFilename = (doc: Pick<Document, 'reference'>): string => `${doc.reference}.pdf`;

/** One key per document, so a retried finalization overwrites its own file instead of adding a second one. */
export const finalFileKey = (doc: Pick<Document, 'accountId' | 'id' | 'reference'>): string =>
  `documents/${doc.accountId}/${doc.id}/final-${doc.reference}.pdf`;

/** Public files live outside /api/v1: `{PUBLIC_BASE_URL}/files/{token}/{reference}.pdf`. */
export const FILES_PREFIX = '/files';

export function finalFileUrl(publicBaseUrl: string, token: string, doc: Pick<Document, 'reference'>): string {
  return `${publicBaseUrl}${FILES_PREFIX}/${token}/${encodeURIComponent(finalFilename(doc))}`;
}
