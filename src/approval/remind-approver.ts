import { approversStore } from '../db/stores/approvers-store.ts';
import { documentsStore } from '../db/stores/documents-store.ts';
import { isoTime } from '../domain/time.ts';
import { statusRefusal } from '../documents/rules.ts';
import { AppError } from '../errors.ts';
import { ApprovalRefused, type ApprovalDeps } from './client.ts';
import { isOpen } from './rules.ts';

export interface Reminder {
  approver_id: string;
  reminded_at: string;
  whatsapp_message_id: string | null;
}

/**
 * Re-sends the current WhatsApp notification to an approver who was notified and has not acted
 * (docs/product-rules.md §4); 409 otherwise. The workflow sends it, so a reminder never races an action.
 */
export async function remindApprover(
  deps: ApprovalDeps,
  accountId: string,
  approverId: string,
): Promise<Reminder> {
  const approver = await approversStore(deps.db).findById(accountId, approverId);
  if (!approver) throw AppError.notFound('Approver');
  const document = (await documentsStore(deps.db).findByIdUnscoped(approver.documentId))!;
  if (!isOpen(document.status)) {
    throw AppError.conflict(
      statusRefusal(document, 'reminders go only to approvers of a pending or in-progress document'),
    );
  }
  if (approver.status !== 'notified') {
    throw AppError.conflict(
      approver.status === 'waiting'
        ? 'This approver has not been notified yet (it is not their turn); nothing to remind'
        : `This approver has already acted (${approver.status}); nothing to remind`,
    );
  }
  let wamid: string | null;
  try {
    ({ wamid } = await deps.approvals.remind(document.id, approver.id));
  } catch (err) {
    if (err instanceof ApprovalRefused) throw AppError.conflict(`Cannot remind: ${err.message}`);
    throw err;
  }
  return { approver_id: approver.id, reminded_at: isoTime(new Date()), whatsapp_message_id: wamid };
}
