import { randomUUID } from 'node:crypto';

/** A fresh key per upload (a replaced file never shares its key with the new one). */
export function originalFileKey(accountId: string, documentId: string): string {
  return `documents/${accountId}/${documentId}/original-${randomUUID()}.pdf`;
}
