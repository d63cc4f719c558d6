import type { SecretBox } from '../../auth/secret-box.ts';
import type { ApprovalClient } from '../approval/client.ts';
import { commitSend } from '../approval/send-document.ts';
import type { Knex } from '../../db/knex.ts';
import { documentsStore } from '../documents/documents-store.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { WebhookDispatcher } from '../webhooks/dispatch.ts';
import type { DocumentEvent } from '../events/document-events-store.ts';
import { createFromVersion } from '../templates/document-from-template.ts';
import type { TemplateVersion } from '../templates/template-store.ts';
import { bulkSendStore, type BulkSend } from './bulk-send-store.ts';

export interface RowDeps {
  db: Knex;
  logger: Logger;
  webhooks?: WebhookDispatcher;
  /** The door into the approval workflows (the worker's own Temporal client). */
  approvals: () => ApprovalClient;
  /** Seals the approvers' link tokens a send issues. */
  secrets: SecretBox;
}

export type RowOutcome = 'sent' | 'failed' | 'cancelled' | 'done';

/**
 * Makes and sends one row's document, exactly once however often it runs (a retried activity, a worker killed
 * mid-row, two attempts at once):
 *
 * 1. Under the row's lock, and with the bulk send's status read under a share lock (so a cancel waits for this
 *    transaction and this transaction sees a committed cancel), the document is made unless the row already names
 *    one, and the row names it in the same transaction: the row is the idempotency key of (bulk send, row).
 * 2. Under the same locks, the draft is sent (`commitSend`: its workflow is `document-<id>`, which Temporal starts
 *    once) and the row reads `sent` in that transaction. A send whose commit was lost is settled by the approval
 *    workflow itself; the row then finds the document sent and says so.
 *
 * A refusal for good (a 4xx of the document services) fails the row with its message; anything else is thrown for
 * the activity's retry (PostgreSQL or Temporal away, a send still being settled).
 */
export async function processRow(
  deps: RowDeps,
  bulk: BulkSend,
  version: TemplateVersion,
  number: number,
): Promise<RowOutcome> {
  try {
    const made = await makeDocument(deps, bulk, version, number);
    if (made.outcome) return made.outcome;
    if (made.created) await dispatch(deps, made.created);
    return await sendDocument(deps, bulk, number);
  } catch (err) {
    if (!permanent(err)) throw err;
    await bulkSendStore(deps.db).setRow(bulk.id, number, { status: 'failed', errors: { _: [err.message] } });
    deps.logger.warn({ bulkSendId: bulk.id, row: number, err }, 'a bulk-send row failed for good');
    return 'failed';
  }
}

function permanent(err: unknown): err is AppError {
  if (!(err instanceof AppError) || err.status >= 500) return false;
  // An earlier send of the document is being settled by its workflow: the next attempt finds it sent.
  return !(err.code === 'conflict' && /still being settled/.test(err.message));
}

async function makeDocument(
  deps: RowDeps,
  bulk: BulkSend,
  version: TemplateVersion,
  number: number,
): Promise<{ outcome?: RowOutcome; documentId: string; created?: DocumentEvent }> {
  return deps.db.transaction(async (trx) => {
    const rows = bulkSendStore(trx);
    const row = await rows.lockRow(bulk.id, number);
    if (!row || (row.status !== 'pending' && row.status !== 'created'))
      return { outcome: 'done', documentId: '' };
    const current = await rows.findUnscoped(bulk.id, { lock: 'share' });
    if (current?.status === 'cancelled') {
      await rows.setRow(bulk.id, number, { status: 'cancelled' });
      return { outcome: 'cancelled', documentId: '' };
    }
    if (row.documentId) return { documentId: row.documentId };
    const input = row.input!;
    const { document, created } = await createFromVersion(trx, {
      accountId: bulk.accountId,
      version,
      recipients: new Map(input.recipients),
      overrides: {
        ...(input.titleAr !== undefined && { titleAr: input.titleAr }),
        ...(input.titleEn !== undefined && { titleEn: input.titleEn }),
      },
    });
    await rows.setRow(bulk.id, number, { status: 'created', documentId: document.id });
    return { documentId: document.id, created };
  });
}

async function sendDocument(deps: RowDeps, bulk: BulkSend, number: number): Promise<RowOutcome> {
  return deps.db.transaction(async (trx) => {
    const rows = bulkSendStore(trx);
    const row = await rows.lockRow(bulk.id, number);
    if (!row || row.status !== 'created' || !row.documentId) return 'done';
    const current = await rows.findUnscoped(bulk.id, { lock: 'share' });
    if (current?.status === 'cancelled') {
      await rows.setRow(bulk.id, number, { status: 'cancelled' });
      return 'cancelled';
    }
    const document = await documentsStore(trx).findByIdUnscoped(row.documentId);
    if (document?.status === 'draft')
      await commitSend(
        { approvals: deps.approvals(), secrets: deps.secrets },
        trx,
        bulk.accountId,
        document.id,
      );
    else if (!document?.workflowId) {
      // Deleted or never sent by anyone: nothing of this row went out.
      await rows.setRow(bulk.id, number, {
        status: 'failed',
        errors: { _: ['The document was removed before it was sent'] },
      });
      return 'failed';
    }
    await rows.setRow(bulk.id, number, { status: 'sent' });
    return 'sent';
  });
}

async function dispatch(deps: RowDeps, created: DocumentEvent): Promise<void> {
  // document.created is committed with the document; an event left undispatched goes with the next one or the sweep.
  const { documentId } = created;
  await deps.webhooks
    ?.dispatchRecorded([created])
    .catch((err: unknown) => deps.logger.warn({ err, documentId }, 'document.created not dispatched yet'));
}
