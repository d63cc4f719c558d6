import type { Knex } from '../../db/knex.ts';
import { documentsStore, type Document } from '../documents/documents-store.ts';
import { serializeDocument, type SerializedDocument } from '../documents/serialize.ts';
import { AppError } from '../../errors.ts';

/** The account's document; another account's document is the same 404 as none. */
export async function accountDocument(db: Knex, accountId: string, documentId: string): Promise<Document> {
  const document = await documentsStore(db).findById(accountId, documentId);
  if (!document) throw AppError.notFound('Document');
  return document;
}

/** The document as an update left it: the workflow's update returns after its activity wrote the read model. */
export async function documentView(db: Knex, document: Document): Promise<SerializedDocument> {
  const current = await documentsStore(db).findWithApprovers(document.accountId, document.id);
  return current ? serializeDocument(current.document, current.approvers) : serializeDocument(document, []);
}
