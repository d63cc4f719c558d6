import type { Db } from '../../db/knex.ts';
import type { DocumentStatus } from '../../domain/model.ts';
import { accountsStore } from '../accounts/accounts-store.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import { documentsStore, type Document } from '../documents/documents-store.ts';
import { whatsAppMessagesStore, type SentReminder } from '../../db/stores/whatsapp-messages-store.ts';
import type { FinalizeApprover, FinalizeDocumentInfo, FinalizeInput } from '../../pdf/index.ts';
import { readObject, type Storage } from '../../storage/storage.ts';
import { OPEN_STATUSES } from './rules.ts';

/** A document that cannot be finalized as it stands in the database or storage; retrying will not change it. */
export class FinalizeStateError extends Error {
  constructor(
    readonly code: 'document_missing' | 'document_closed' | 'approvers_incomplete' | 'file_missing',
    message: string,
  ) {
    super(message);
    this.name = 'FinalizeStateError';
  }
}

/** Width of a placed mark when the approver's placement gives none (PDF points). */
export const DEFAULT_PLACEMENT_WIDTH = { sign: 150, stamp: 100 } as const;

const FINALIZABLE: readonly DocumentStatus[] = [...OPEN_STATUSES, 'approved'];

export interface FinalizeRecord {
  document: Document;
  approvers: Approver[];
  /** Every approver row of the document, in order, delegators included: final once all have completed. */
  all: Approver[];
  /** Approvers who delegated their step (status `delegated`): printed in their delegate's block. */
  delegators?: Approver[];
  /** When the last approver acted: the certificate's completion time and the signing time. */
  completedAt: Date;
}

/** The document and its approvers, checked to be complete; cheap (no files read). */
export async function loadFinalizeRecord(db: Db, documentId: string): Promise<FinalizeRecord> {
  const document = await documentsStore(db).findByIdUnscoped(documentId);
  if (!document) throw new FinalizeStateError('document_missing', `Document ${documentId} does not exist`);
  if (!FINALIZABLE.includes(document.status)) {
    throw new FinalizeStateError(
      'document_closed',
      `Document ${documentId} is ${document.status}; only a fully approved document is finalized`,
    );
  }
  // An approver who delegated is on the certificate through their delegate's block (who, to whom, when, why).
  const all = await approversStore(db).listByDocument(documentId);
  const approvers = all.filter((a) => a.status !== 'delegated');
  const open = approvers.filter((a) => a.status !== 'completed' || !a.actedAt);
  if (approvers.length === 0 || open.length > 0) {
    throw new FinalizeStateError(
      'approvers_incomplete',
      `Document ${documentId} has ${open.length} of ${approvers.length} approvers who have not completed`,
    );
  }
  const completedAt = new Date(Math.max(...approvers.map((a) => a.actedAt!.getTime())));
  return { document, approvers, all, delegators: all.filter((a) => a.status === 'delegated'), completedAt };
}

/**
 * Everything `finalizeDocument` needs but the signer: the original file, the approvers' evidence and their
 * signature or stamp images from storage, the account's name for generated seals.
 */
export async function loadFinalizeInput(
  db: Db,
  storage: Storage,
  record: FinalizeRecord,
): Promise<Omit<FinalizeInput, 'signer' | 'options'>> {
  const { document, approvers, completedAt } = record;
  const delegators = new Map((record.delegators ?? []).map((d) => [d.id, d]));
  const account = await accountsStore(db).findById(document.accountId);
  // Who stamped with the generated seal: on the approvers' rows the finalization read, not read again.
  const seals = new Set(
    [...approvers, ...delegators.values()].filter((a) => a.generatedSeal).map((a) => a.id),
  );
  const reminders = await whatsAppMessagesStore(db).sentRemindersByApprover(document.id);
  const read = async (key: string, what: string) => {
    const bytes = await readObject(storage, key);
    if (!bytes) throw new FinalizeStateError('file_missing', `${what} (${key}) is missing from storage`);
    return bytes;
  };

  const info: FinalizeDocumentInfo = {
    reference: document.reference,
    titleAr: document.titleAr,
    titleEn: document.titleEn,
    createdAt: document.createdAt,
    sentAt: document.sentAt ?? document.createdAt,
    completedAt,
    originalSha256: document.fileSha256,
    accountName: account?.name ?? '',
  };
  const finalizeApprovers: FinalizeApprover[] = [];
  for (const a of approvers) {
    const image =
      a.signatureKey && (a.actionType === 'sign' || a.actionType === 'stamp')
        ? await read(a.signatureKey, `The ${a.actionType} image of approver ${a.id}`)
        : undefined;
    finalizeApprovers.push({
      ...toFinalizeApprover(a, image, seals.has(a.id), reminders.get(a.id) ?? []),
      ...delegatedFrom(a, delegators),
    });
  }
  return {
    original: await read(document.fileKey, `The original file of document ${document.id}`),
    document: info,
    approvers: finalizeApprovers,
  };
}

/**
 * A delegate's chain of delegations, the first approver first (a delegate may delegate in turn): who handed the
 * step on, when, why and how they were verified.
 */
function delegatedFrom(a: Approver, delegators: ReadonlyMap<string, Approver>): Partial<FinalizeApprover> {
  const chain: NonNullable<FinalizeApprover['delegatedFrom']> = [];
  const seen = new Set<string>();
  for (let id = a.delegatedFromId; id && !seen.has(id);) {
    seen.add(id);
    const from = delegators.get(id);
    if (!from?.actedAt) break;
    chain.unshift({
      nameAr: from.nameAr,
      nameEn: from.nameEn,
      phone: from.phone,
      at: from.actedAt,
      reason: from.delegationReason,
      verifiedBy: from.verifiedBy,
    });
    id = from.delegatedFromId;
  }
  return chain.length ? { delegatedFrom: chain } : {};
}

function toFinalizeApprover(
  a: Approver,
  image: Buffer | undefined,
  generatedSeal: boolean,
  reminders: SentReminder[],
): FinalizeApprover {
  const page = a.actionChannel === 'page';
  return {
    nameAr: a.nameAr,
    nameEn: a.nameEn,
    roleAr: a.roleAr,
    roleEn: a.roleEn,
    phone: a.phone,
    actionType: a.actionType,
    order: a.orderIndex,
    status: a.status,
    actedAt: a.actedAt!,
    channel: a.actionChannel === 'whatsapp' ? 'whatsapp' : 'page',
    ip: page ? a.actionIp : null,
    userAgent: page ? a.actionUserAgent : null,
    whatsappMessageId: page ? null : a.actionMessageId,
    verifiedBy: a.verifiedBy ?? (page ? 'none' : 'whatsapp_reply'),
    reminders,
    signaturePng: a.actionType === 'sign' ? (image ?? null) : null,
    typedName: a.actionType === 'sign' ? a.typedName : null,
    stampPng: a.actionType === 'stamp' ? (image ?? null) : null,
    generatedSeal: a.actionType === 'stamp' && generatedSeal,
    placement:
      a.placement && (a.actionType === 'sign' || a.actionType === 'stamp')
        ? {
            page: a.placement.page,
            x: a.placement.x,
            y: a.placement.y,
            width: a.placement.width ?? DEFAULT_PLACEMENT_WIDTH[a.actionType],
          }
        : null,
  };
}
