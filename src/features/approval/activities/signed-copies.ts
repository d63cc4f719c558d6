import { ApplicationFailure } from '@temporalio/activity';
import { approversStore, type Approver } from '../../documents/approvers-store.ts';
import { documentsStore, openFinalToken, type Document } from '../../documents/documents-store.ts';
import { whatsAppMessagesStore } from '../../../db/stores/whatsapp-messages-store.ts';
import { finalFilename, finalFileUrl } from '../../documents/final-file.ts';
import {
  type ApprovalNotice,
  CC_GREETING,
  isWhatsAppSendError,
  languageFor,
  sendNotice,
} from '../../../whatsapp/index.ts';
import type { SignedCopiesInput } from '../definitions.ts';
import type { ActivityContext } from './context.ts';

/** One recipient of a signed copy: an approver, or one of the document's cc recipients (no approver id). */
type CopyRecipient = Pick<
  ApprovalNotice,
  'approverId' | 'phone' | 'language' | 'approverName' | 'idempotencyKey'
> &
  Partial<Pick<ApprovalNotice, 'actionType'>>;

/**
 * Who gets a copy: every approver WhatsApp reaches (one the account reaches itself, `notify: false`, gets none),
 * then each cc recipient, keyed by their place in the list (fixed once sent). A number that is also an approver's
 * (an approver changed after cc was set) is the approver's: no second copy.
 */
async function recipients(
  ctx: ActivityContext,
  document: Document,
  prefix: string,
  known: readonly Approver[] | undefined,
): Promise<CopyRecipient[]> {
  const approvers = known ?? (await approversStore(ctx.deps.db).listByDocument(document.id));
  const approverPhones = new Set(approvers.map((a) => a.phone));
  return [
    ...approvers
      .filter((a) => a.notify)
      .map((approver): CopyRecipient => {
        const language = languageFor(approver.phone, approver.language);
        return {
          approverId: approver.id,
          phone: approver.phone,
          language,
          approverName: language === 'ar' ? approver.nameAr : approver.nameEn,
          actionType: approver.actionType,
          idempotencyKey: `${prefix}:${approver.id}:signed_copy`,
        };
      }),
    ...[...document.cc.entries()]
      .filter(([, cc]) => !approverPhones.has(cc.phone))
      .map(([i, cc]): CopyRecipient => {
        const language = languageFor(cc.phone, cc.language);
        return {
          approverId: null,
          phone: cc.phone,
          language,
          approverName: cc.name ?? CC_GREETING[language],
          idempotencyKey: `${prefix}:cc:${i}:signed_copy`,
        };
      }),
  ];
}

/** The approved document and its approvers as the finalization that just committed them had them. */
export interface ApprovedRead {
  document?: Document | undefined;
  approvers?: readonly Approver[] | undefined;
}

/**
 * Sends the approved document's signed file to its approvers and cc recipients over WhatsApp. A copy refused for
 * good is counted (the document is approved either way); a retryable failure fails the activity once the others
 * were tried, and its retry skips the copies already sent (same idempotency keys). `known`: what the caller read
 * of the approved document, not read again.
 */
export async function sendSignedCopies(
  ctx: ActivityContext,
  { documentId, idempotencyPrefix }: SignedCopiesInput,
  known: ApprovedRead = {},
): Promise<{ sent: number; failed: number }> {
  const { deps } = ctx;
  const document = known.document ?? (await documentsStore(deps.db).findByIdUnscoped(documentId));
  if (!document)
    throw ApplicationFailure.nonRetryable(`Document ${documentId} does not exist`, 'document_missing');
  const finalToken = openFinalToken(document, deps.secrets);
  if (document.status !== 'approved' || !finalToken || !deps.publicBaseUrl)
    throw ApplicationFailure.nonRetryable(
      `Document ${documentId} has no signed file to send`,
      'no_signed_file',
    );
  const file = {
    link: finalFileUrl(deps.publicBaseUrl, finalToken, document),
    filename: finalFilename(document),
  };
  let sent = 0;
  let failed = 0;
  let retryable: Error | undefined;
  for (const recipient of await recipients(ctx, document, idempotencyPrefix, known.approvers)) {
    try {
      await sendNotice(
        {
          provider: deps.whatsapp.provider,
          templates: deps.whatsapp.templates,
          messages: whatsAppMessagesStore(deps.db),
          secrets: deps.secrets,
          recordRetry: deps.whatsapp.recordRetry,
          logger: deps.logger,
        },
        {
          kind: 'signed_copy',
          accountId: document.accountId,
          documentId: document.id,
          documentTitle: recipient.language === 'ar' ? document.titleAr : document.titleEn,
          reference: document.reference,
          linkToken: '',
          actionType: 'approve_only',
          ...recipient,
          document: file,
        },
      );
      sent++;
    } catch (err) {
      if (!isWhatsAppSendError(err) || err.retryable) {
        retryable ??= err instanceof Error ? err : new Error(String(err));
        continue;
      }
      // Refused for good (recorded on the outbox row by sendNotice): the document is approved either way.
      deps.logger.warn({ err, approverId: recipient.approverId }, 'WhatsApp refused a signed copy');
      failed++;
    }
  }
  if (retryable !== undefined) throw retryable;
  return { sent, failed };
}
