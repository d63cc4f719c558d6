import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import type { DocumentStatus } from '../../domain/model.ts';
import { AppError } from '../../errors.ts';
import { verificationUrl } from '../approval/verifications-store.ts';
import {
  coalescedDocumentReads,
  documentsStore,
  openVerificationToken,
  type Document,
} from './documents-store.ts';
import { requireDraft } from './rules.ts';
import { serializeDocument, type SerializedDocument } from './serialize.ts';
import { representShown } from './shown-documents.ts';

/** What the reads need to show an approved document's verification URL. */
export interface DocumentReadDeps {
  db: Knex;
  secrets: SecretBox;
  publicBaseUrl: string;
}

/**
 * Verification tokens already opened, by document and sealed copy. Opening one is an AES-GCM decryption on every
 * read of an approved document, and its answer never changes for the same sealed copy (a resealed or replaced
 * token is another key here, and the document id in the key keeps the copy bound to its row). Not a cache of
 * anything that can go stale: the document itself is read from PostgreSQL each time. A copy that does not open
 * is never stored. At most `maxEntries`, the oldest dropped first. Build it once per app.
 */
export function verificationTokens(secrets: SecretBox, maxEntries = 10_000) {
  const opened = new Map<string, string>();
  return {
    open(documentId: string, sealed: string): string {
      const key = `${documentId}\n${sealed}`;
      const hit = opened.get(key);
      if (hit !== undefined) return hit;
      const token = openVerificationToken(documentId, sealed, secrets);
      if (opened.size >= maxEntries) opened.delete(opened.keys().next().value!);
      opened.set(key, token);
      return token;
    },
  };
}
export type VerificationTokens = ReturnType<typeof verificationTokens>;

/** An approved document's verification URL, from its sealed token; none for any other status. */
function verificationOf(
  deps: DocumentReadDeps & { tokens?: VerificationTokens },
  document: Pick<Document, 'id' | 'status'>,
  sealed: string | null | undefined,
): string | undefined {
  if (document.status !== 'approved' || !sealed) return undefined;
  const token = deps.tokens
    ? deps.tokens.open(document.id, sealed)
    : openVerificationToken(document.id, sealed, deps.secrets);
  return verificationUrl(deps.publicBaseUrl, token);
}

/** One page of an account's documents, newest first, and the count of every match. */
export async function listDocuments(
  deps: DocumentReadDeps,
  accountId: string,
  query: { status?: DocumentStatus; page: number; perPage: number },
): Promise<{ documents: SerializedDocument[]; total: number }> {
  const { documents, approvers, verificationSealed, total } = await documentsStore(deps.db).list(accountId, {
    status: query.status,
    limit: query.perPage,
    offset: (query.page - 1) * query.perPage,
  });
  return {
    documents: documents.map((d) =>
      serializeDocument(d, approvers.get(d.id) ?? [], {
        verificationUrl: verificationOf(deps, d, verificationSealed.get(d.id)),
      }),
    ),
    total,
  };
}

/**
 * `GET /documents/{id}`: the account's document with its approvers, 404 when the account has no such document. The
 * reads of one event-loop turn share one query, which selects the representation itself (`representShown`), and a
 * verification token is opened once. Build it once per app.
 */
export function coalescedShowDocument(deps: DocumentReadDeps) {
  const reads = coalescedDocumentReads(deps.db);
  const withTokens = { ...deps, tokens: verificationTokens(deps.secrets) };
  return async (accountId: string, id: string): Promise<SerializedDocument> => {
    const row = await reads.find(accountId, id);
    if (!row) throw AppError.notFound('Document');
    return representShown(row, verificationOf(withTokens, row, row.verification_sealed));
  };
}

/**
 * The account's document if it is a draft: 404 or 409 (with `refusal`) otherwise. A check before reading a request's
 * body, so a change the document's status forbids is refused before its upload is stored; the change itself checks
 * again under the document's lock.
 */
export async function requireDraftDocument(
  db: Knex,
  accountId: string,
  id: string,
  refusal: string,
): Promise<Document> {
  const document = await documentsStore(db).findById(accountId, id);
  if (!document) throw AppError.notFound('Document');
  requireDraft(document, refusal);
  return document;
}
