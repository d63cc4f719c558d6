import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import type { DocumentStatus } from '../../domain/model.ts';
import { AppError } from '../../errors.ts';
import { verificationUrl } from '../approval/verifications-store.ts';
import { documentsStore, openVerificationToken, type Document } from './documents-store.ts';
import { requireDraft } from './rules.ts';
import { serializeDocument, type SerializedDocument } from './serialize.ts';

/** What the reads need to show an approved document's verification URL. */
export interface DocumentReadDeps {
  db: Knex;
  secrets: SecretBox;
  publicBaseUrl: string;
}

/** An approved document's verification URL, from its sealed token; none for any other status. */
function verificationOf(
  deps: DocumentReadDeps,
  document: Document,
  sealed: string | null | undefined,
): string | undefined {
  if (document.status !== 'approved' || !sealed) return undefined;
  return verificationUrl(deps.publicBaseUrl, openVerificationToken(document.id, sealed, deps.secrets));
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

/** The account's document with its approvers; 404 when the account has no such document. */
export async function showDocument(
  deps: DocumentReadDeps,
  accountId: string,
  id: string,
): Promise<SerializedDocument> {
  const found = await documentsStore(deps.db).findWithApprovers(accountId, id);
  if (!found) throw AppError.notFound('Document');
  const { document, approvers, verificationSealed } = found;
  return serializeDocument(document, approvers, {
    verificationUrl: verificationOf(deps, document, verificationSealed),
  });
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
