import type { Knex } from '../../db/knex.ts';
import { documentsStore, type Document } from '../documents/documents-store.ts';
import { serializeFinalization, type SerializedFinalization } from '../documents/serialize.ts';
import { AppError } from '../../errors.ts';
import { ApprovalRefused, type ApprovalClient } from './client.ts';
import type { ApprovalView } from './definitions.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The document an operator names by id or by reference (WQT-2026-000042; refused when two accounts share it). */
export async function findDocumentForOperator(db: Knex, idOrReference: string): Promise<Document> {
  const key = idOrReference.trim();
  if (UUID.test(key)) {
    const document = await documentsStore(db).findByIdUnscoped(key);
    if (!document) throw AppError.notFound('Document');
    return document;
  }
  const found = await documentsStore(db).findByReferenceUnscoped(key);
  if (found.length === 0) throw AppError.notFound('Document');
  if (found.length > 1) {
    throw AppError.conflict(
      'ambiguous_reference',
      `${found.length} accounts have a document ${key}; name it by id: ${found.map((d) => d.id).join(', ')}`,
    );
  }
  return found[0]!;
}

export interface RetryFinalizationResult {
  id: string;
  reference: string;
  status: string;
  finalization: SerializedFinalization | null;
  /** What the workflow answered: the failure or the parked write it was waiting on is cleared. */
  workflow: ApprovalView;
}

/**
 * The operator's retry (`npm run cli -- documents:retry-finalization <id or reference>`): sends the workflow its
 * `retryFinalization` update, which runs the failed finalization again (or the read-model write it is parked on)
 * and returns at once; the document becomes `approved` when the retry succeeds, or reads `failed` again with a
 * new `failed_at`. Refused (409) when there is nothing to retry.
 */
export async function retryFinalization(
  deps: { db: Knex; approvals: ApprovalClient },
  idOrReference: string,
): Promise<RetryFinalizationResult> {
  const document = await findDocumentForOperator(deps.db, idOrReference);
  if (document.status !== 'in_progress' && document.status !== 'pending') {
    throw AppError.conflict(
      'nothing_to_retry',
      `Document ${document.reference} is ${document.status}; only a document whose finalization failed (in_progress) can be retried`,
    );
  }
  let workflow: ApprovalView;
  try {
    workflow = await deps.approvals.retryFinalization(document.id);
  } catch (err) {
    if (!(err instanceof ApprovalRefused)) throw err;
    throw AppError.conflict(
      err.refusal === 'nothing_to_retry' ? 'nothing_to_retry' : 'action_refused',
      err.refusal === 'nothing_to_retry'
        ? `Document ${document.reference} is ${document.status} and its finalization has not failed: nothing to retry`
        : `Document ${document.reference}: ${err.message}`,
    );
  }
  return {
    id: document.id,
    reference: document.reference,
    status: document.status,
    finalization: serializeFinalization(document),
    workflow,
  };
}
