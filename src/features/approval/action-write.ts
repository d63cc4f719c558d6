import type { Knex } from '../../db/knex.ts';
import { actionEvidenceStore } from './action-evidence-store.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import { documentsStore, type Document } from '../documents/documents-store.ts';
import type { ActionEvidence, ActionKind } from '../../domain/model.ts';
import { withApprover, type DocumentEvents } from '../events/document-events.ts';
import { OPEN_STATUSES } from './rules.ts';

/** The dedupe keys of the events an action records: the approver's, and for a rejection the document's. */
export function actionEventKeys(documentId: string, approverId: string, kind: ActionKind): string[] {
  return kind === 'complete'
    ? [`approver.completed:${approverId}`]
    : [`approver.rejected:${approverId}`, `document.rejected:${documentId}`];
}

/**
 * An approver's action written to the read model: their row (from the evidence), the evidence row `accepted`,
 * the document's move (pending → in_progress, or → rejected) and the events, in `trx`, which holds the
 * document's row lock and has checked that the action may be taken. The one writer of those moves: the API's
 * act-in-database.ts and the recordApproverAction activity of runs that take the act update both call it.
 */
export async function writeApproverAction(
  events: DocumentEvents,
  trx: Knex.Transaction,
  action: {
    documentId: string;
    /** The document as `trx` read it under its row lock, before the action. */
    document: Document;
    /** The document's approvers as `trx` has them before the action (the events carry them after it). */
    approvers: readonly Approver[];
    approver: Approver;
    kind: ActionKind;
    evidence: ActionEvidence;
    /**
     * The evidence row to mark accepted: absent when the caller accepted it already (act-in-database.ts), and for
     * the oldest legacy actions, which carried it inline.
     */
    evidenceId?: string;
  },
): Promise<void> {
  const { documentId, approver, kind, evidence: e } = action;
  const [key, documentKey] = actionEventKeys(documentId, approver.id, kind) as [string, string?];
  const acted = await approversStore(trx).update(approver.id, {
    status: kind === 'complete' ? 'completed' : 'rejected',
    actedAt: new Date(e.at),
    actionChannel: e.channel,
    actionIp: e.ip ?? null,
    actionUserAgent: e.userAgent ?? null,
    actionMessageId: e.messageId ?? null,
    signatureKey: e.imageKey ?? null,
    typedName: e.typedName ?? null,
    rejectionReason: kind === 'reject' ? (e.reason ?? null) : null,
    // A reply in the approver's own WhatsApp chat proves their number.
    verifiedBy: e.verifiedBy ?? (e.channel === 'whatsapp' ? 'whatsapp_reply' : 'none'),
    // Stamped with the seal generated from the account and their name: the finalization draws it.
    ...(e.generatedSeal && { generatedSeal: true }),
  });
  const approvers = acted && withApprover(action.approvers, acted);
  if (action.evidenceId) await actionEvidenceStore(trx).markAccepted(action.evidenceId);

  if (kind === 'complete') {
    // Only the first action moves the document; the row read under the lock is the row as it stands otherwise
    // (the approver's writes above do not touch it).
    const document =
      action.document.status === 'pending'
        ? ((await documentsStore(trx).transition(documentId, ['pending'], 'in_progress')) ?? action.document)
        : action.document;
    await events.record(trx, {
      event: 'approver.completed',
      dedupeKey: key,
      document,
      approver: acted,
      approvers,
    });
    return;
  }
  // The approver's own event first, with the document as it stood when they rejected; then the document's.
  await events.record(trx, {
    event: 'approver.rejected',
    dedupeKey: key,
    document: action.document,
    approver: acted,
    approvers,
  });
  const document = await documentsStore(trx).transition(documentId, OPEN_STATUSES, 'rejected', {
    rejectionReason: e.reason ?? null,
    completedAt: new Date(e.at),
  });
  if (document)
    await events.record(trx, {
      event: 'document.rejected',
      dedupeKey: documentKey!,
      document,
      approver: acted,
      approvers,
    });
}
