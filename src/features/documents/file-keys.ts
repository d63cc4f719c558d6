import { randomUUID } from 'node:crypto';

/** A fresh key per upload (a replaced file never shares its key with the new one). */
export function originalFileKey(accountId: string, documentId: string): string {
  return `documents/${accountId}/${documentId}/original-${randomUUID()}.pdf`;
}

/** A template version's PDF: every document made from that version reads this one file (nothing is copied). */
export function templateFileKey(accountId: string, templateId: string): string {
  return `templates/${accountId}/${templateId}/original-${randomUUID()}.pdf`;
}

/**
 * Whether a document's file is its own to remove with it: a file under `templates/` belongs to the template
 * version the document was made from, which other documents share and which outlives every one of them.
 */
export function ownsFile(fileKey: string): boolean {
  return !fileKey.startsWith('templates/');
}
