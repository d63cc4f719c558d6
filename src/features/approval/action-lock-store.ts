import type { Knex } from '../../db/knex.ts';
import { named } from '../../db/prepared.ts';
import {
  DOCUMENT_COLUMNS,
  toDocument,
  type Document,
  type DocumentRow,
} from '../documents/documents-rows.ts';
import type { ActionProtocol } from './definitions.ts';

/** What an action's transaction learns in the statement that locks the document. */
export interface LockedForAction {
  document: Document;
  /** How the document's run takes actions (approval_run_protocols); undefined: the act update. */
  protocol: ActionProtocol | undefined;
  /** The transaction's clock (PostgreSQL's now()), which decides the deadline. */
  now: Date;
}

/**
 * The document's row locked for an action (FOR NO KEY UPDATE, as every writer of its status takes it), with its
 * run's protocol and the database's clock in the same round trip. The protocol row is written once, by the run's
 * first activity, before any approver is sent a link, so reading it alongside the lock cannot miss it for an
 * action an approver could take. Undefined when no such document exists.
 */
export async function lockForAction(
  trx: Knex.Transaction,
  documentId: string,
): Promise<LockedForAction | undefined> {
  const { rows } = await trx
    .raw<{
      rows: (DocumentRow & { run_protocol: ActionProtocol | null; db_now: Date })[];
    }>(
      `SELECT ${DOCUMENT_COLUMNS.map((c) => `d.${c}`).join(', ')},
            (SELECT p.protocol FROM approval_run_protocols p WHERE p.document_id = d.id) AS run_protocol,
            now() AS db_now
       FROM documents d
      WHERE d.id = ?
        FOR NO KEY UPDATE OF d`,
      [documentId],
    )
    .options(named('document_locked_for_action'));
  const row = rows[0];
  if (!row) return undefined;
  const { run_protocol, db_now, ...document } = row;
  return { document: toDocument(document), protocol: run_protocol ?? undefined, now: db_now };
}
