import { setTimeout as sleep } from 'node:timers/promises';
import { approversStore } from '../documents/approvers-store.ts';
import { documentEventsStore } from '../events/document-events-store.ts';
import { documentsStore, type Document } from '../documents/documents-store.ts';
import type { Knex } from '../../db/knex.ts';
import { LIMITS, type ReminderSettings } from '../../domain/model.ts';
import { isoTime } from '../../domain/time.ts';
import type { SerializedDocument } from '../documents/serialize.ts';
import { statusRefusal } from '../documents/rules.ts';
import { AppError } from '../../errors.ts';
import { ApprovalRefused, type ApprovalDeps } from './client.ts';
import { approvalWorkflowId } from './definitions.ts';
import { documentView } from './document-view.ts';
import { markPending } from './mark-pending.ts';
import type { NoticeWait } from '../../db/notice-waits.ts';

/**
 * Sends a draft for approval (docs/product-rules.md §3–§4). Preconditions: the document is a draft (409), has
 * 1 to 50 approvers (422) and its deadline is still ahead (409).
 *
 * One transaction holds the document's row lock from the status check to `pending`: the approvers are read under
 * it, the workflow starts with exactly that set, and the document turns `pending` before the lock is released.
 * Every approver change and document update takes the same lock and re-checks `draft` under it, so an edit either
 * lands before the send reads the approvers (and the workflow has it) or finds the document `pending` (409). Two
 * sends queue on the lock; the second finds `pending` (409).
 *
 * The start waits on no activity (markDocumentSent takes this same lock, so waiting on it here would deadlock);
 * when the start fails, nothing was started and the transaction rolls back: the document stays a draft and can
 * be sent again. After the commit the answer waits for the workflow to record the send (the `document.sent`
 * event in the read model), as before.
 */
export async function sendDocument(
  deps: ApprovalDeps,
  accountId: string,
  documentId: string,
): Promise<SerializedDocument> {
  // Before the send, so the workflow's record of it cannot go by unheard. Keyed as PostgreSQL prints a uuid (the
  // path may spell it in capitals).
  const recorded = deps.writeNotices?.documentSent.watch(documentId.toLowerCase());
  try {
    return await sendAndAnswer(deps, accountId, documentId, recorded);
  } finally {
    recorded?.cancel();
  }
}

async function sendAndAnswer(
  deps: ApprovalDeps,
  accountId: string,
  documentId: string,
  recorded: NoticeWait | undefined,
): Promise<SerializedDocument> {
  const document = await deps.db.transaction((trx) => commitSend(deps, trx, accountId, documentId));
  // Sent and committed: a slow `document.sent` changes nothing the client can act on (a retry would be 409), so
  // the answer is the pending document either way.
  await sendRecorded(deps, document.id, recorded);
  return documentView(deps.db, document);
}

/**
 * The send itself, inside the caller's transaction: the document's row lock, the checks, the workflow's start and
 * `pending`. It commits with the caller's transaction, so a caller can make the send depend on rows of its own
 * that it holds locked (a bulk send's row and its status); the workflow waits for that commit.
 */
export async function commitSend(
  deps: Pick<ApprovalDeps, 'approvals' | 'secrets'>,
  trx: Knex.Transaction,
  accountId: string,
  documentId: string,
): Promise<Document> {
  const draft = await documentsStore(trx).findByIdForUpdate(accountId, documentId);
  if (!draft) throw AppError.notFound('Document');
  if (draft.status !== 'draft')
    throw AppError.conflict('already_sent', statusRefusal(draft, 'only a draft can be sent'));
  const approvers = await approversStore(trx).listByDocument(draft.id);
  if (approvers.length === 0) {
    throw AppError.validation({
      approvers: ['A document needs at least one approver before it can be sent'],
    });
  }
  if (approvers.length > LIMITS.approversMax) {
    throw AppError.validation({
      approvers: [`A document can have at most ${LIMITS.approversMax} approvers`],
    });
  }
  if (draft.expiresAt.getTime() <= Date.now()) {
    throw AppError.conflict(
      'document_expired',
      `Document expired at ${isoTime(draft.expiresAt)} before it was sent; renew it with PUT /documents/${draft.id} and expires_in_days`,
    );
  }
  const account = await trx('accounts')
    .where({ id: draft.accountId })
    .first<{ default_reminders: ReminderSettings | null } | undefined>('default_reminders');
  try {
    await deps.approvals.start(draft, approvers, account?.default_reminders ?? null);
  } catch (err) {
    // A run of this workflow id is still open while the document is a draft: an earlier send started it and
    // never committed, and its first activity (waiting for this lock) will settle it.
    if (err instanceof ApprovalRefused)
      throw AppError.conflict(
        'send_in_progress',
        'An earlier send of this document is still being settled; try again shortly',
      );
    throw err;
  }
  const sent = await markPending(trx, deps.secrets, draft.id, approvalWorkflowId(draft.id), approvers);
  return sent!; // the row lock held since the read: still a draft
}

/** How long the answer to a send waits for the workflow to record it (as long as any answer from a workflow). */
const SENT_WAIT_MS = 20_000;

/**
 * Waits until the workflow's first write (markDocumentSent) has recorded `document.sent` in the read model, or
 * SENT_WAIT_MS. Read from PostgreSQL rather than asked of the workflow with the `sent` update, which would cost
 * a workflow task and its history events per document; read once PostgreSQL announces it (`recorded`, migration
 * 029), or, without the notices (or should one not come within 250 ms), at growing intervals (one indexed lookup).
 */
async function sendRecorded(
  deps: ApprovalDeps,
  documentId: string,
  recorded: NoticeWait | undefined,
): Promise<boolean> {
  const events = documentEventsStore(deps.db);
  const until = Date.now() + SENT_WAIT_MS;
  // Settled once: heard, or the notices stopped (then it is read at growing intervals, as without them).
  let notice = recorded?.heard.then(() => 'notice' as const);
  for (let pause = 5; ; pause = Math.min(pause * 2, 250)) {
    if (notice) {
      const woke = await Promise.race([notice, sleep(NOTICE_PATIENCE_MS).then(() => 'patience' as const)]);
      if (woke === 'notice') notice = undefined;
    }
    if (await events.findByDedupeKey(`document.sent:${documentId}`)) return true;
    if (Date.now() + pause > until) return false;
    if (!notice) await sleep(pause);
  }
}

/** How long the send's answer waits for the notice before it reads the row all the same. */
const NOTICE_PATIENCE_MS = 250;
