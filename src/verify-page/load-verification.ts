import type { Db } from '../db/knex.ts';
import { accountsStore } from '../features/accounts/accounts-store.ts';
import { approversStore } from '../features/documents/approvers-store.ts';
import type { Approver } from '../features/documents/approvers-store.ts';
import { documentsStore, type Document } from '../features/documents/documents-store.ts';
import { verificationsStore } from '../features/approval/verifications-store.ts';
import type { ActionType } from '../domain/model.ts';
import { describeOutcome, maskPhone } from '../pdf/compose/wording.ts';

/** Where the page lives: the store builds the certificate's link with the same prefix. */
export { VERIFY_PREFIX } from '../features/approval/verifications-store.ts';

/** What the signed file's signature is, when the document records it. */
export interface SignatureFacts {
  /** PAdES baseline level: B-B, B-T, B-LT or B-LTA. */
  level: string;
  signedAt: Date;
  /** The signing certificate's subject, when known. */
  certificateSubject?: string;
}

export interface VerifiedApprover {
  nameAr: string;
  nameEn: string;
  roleAr: string | null;
  roleEn: string | null;
  /** Masked as on the certificate: "+966 •••••4567". */
  phone: string;
  actionType: ActionType;
  outcome: { en: string; ar: string };
  channel: 'whatsapp' | 'page';
  actedAt: Date;
  /**
   * A delegate: the delegations that led to them, first one first, as the certificate prints
   * them in their block: who handed the step to whom (names; the giver's phone masked), when and why.
   */
  delegations: VerifiedDelegation[];
}

export interface VerifiedDelegation {
  from: { nameAr: string; nameEn: string; phone: string };
  to: { nameAr: string; nameEn: string };
  at: Date;
  reason: string | null;
}

/**
 * What the public page shows: what the signed certificate itself prints, and nothing it does not (no IP address,
 * user agent or message id: the page is public to whoever holds a printed copy).
 */
export interface VerificationView {
  reference: string;
  titleAr: string;
  titleEn: string;
  accountName: string;
  /** SHA-256 (hex) of the signed final file, and of the original upload. */
  signedSha256: string;
  originalSha256: string;
  /** When the last approver acted: the signing time written into the signature. */
  signedAt: Date;
  /** Null until the document records its signature (see `signatureOf`). */
  signature: SignatureFacts | null;
  approvers: VerifiedApprover[];
}

/** What the page tells of the signature: the document's recorded `signature` (migration 013), if any. */
export function signatureOf(document: Document): SignatureFacts | null {
  const recorded = document.signature;
  if (!recorded) return null;
  return {
    level: recorded.level,
    signedAt: new Date(recorded.signed_at),
    certificateSubject: recorded.certificate.subject,
  };
}

/**
 * The page's data for a token, or undefined: a malformed or unknown token, and a document that is not approved
 * with its signed file stored (a finalization that failed, then a void, leaves a token behind) look the same.
 */
export async function loadVerification(
  db: Db,
  token: string | undefined,
): Promise<VerificationView | undefined> {
  const documentId = await verificationsStore(db).findDocumentId(token);
  const document = documentId ? await documentsStore(db).findByIdUnscoped(documentId) : undefined;
  if (!document || document.status !== 'approved' || !document.finalSha256) return undefined;
  const all = await approversStore(db).listByDocument(document.id);
  const approvers = all.filter((a) => a.status === 'completed' && a.actedAt);
  const account = await accountsStore(db).findById(document.accountId);
  const signedAt = new Date(Math.max(...approvers.map((a) => a.actedAt!.getTime())));
  return {
    reference: document.reference,
    titleAr: document.titleAr,
    titleEn: document.titleEn,
    accountName: account?.name ?? '',
    signedSha256: document.finalSha256,
    originalSha256: document.fileSha256.toLowerCase(),
    signedAt,
    signature: signatureOf(document),
    approvers: approvers
      .sort((a, b) => a.orderIndex - b.orderIndex)
      .map((a) => ({
        nameAr: a.nameAr,
        nameEn: a.nameEn,
        roleAr: a.roleAr,
        roleEn: a.roleEn,
        phone: maskPhone(a.phone),
        actionType: a.actionType,
        outcome: describeOutcome({
          status: a.status,
          actionType: a.actionType,
          image: Boolean(a.signatureKey),
          typedName: a.typedName,
          nameEn: a.nameEn,
          nameAr: a.nameAr,
        }),
        channel: a.actionChannel === 'whatsapp' ? 'whatsapp' : 'page',
        actedAt: a.actedAt!,
        delegations: delegationsTo(a, all),
      })),
  };
}

/**
 * The chain of delegations that made `a` an approver, first one first (a delegate may delegate in turn): each link
 * names who delegated and to whom, as the certificate does (src/features/approval/finalize-input.ts).
 */
function delegationsTo(a: Approver, all: readonly Approver[]): VerifiedDelegation[] {
  const byId = new Map(all.map((x) => [x.id, x]));
  const chain: VerifiedDelegation[] = [];
  const seen = new Set<string>();
  let to: Approver = a;
  for (let id = a.delegatedFromId; id && !seen.has(id);) {
    seen.add(id);
    const from = byId.get(id);
    if (!from?.actedAt || from.status !== 'delegated') break;
    chain.unshift({
      from: { nameAr: from.nameAr, nameEn: from.nameEn, phone: maskPhone(from.phone) },
      to: { nameAr: to.nameAr, nameEn: to.nameEn },
      at: from.actedAt,
      reason: from.delegationReason,
    });
    to = from;
    id = from.delegatedFromId;
  }
  return chain;
}

/** What a file is, by its SHA-256 (lowercase hex). */
export type CheckResult = 'signed' | 'original' | 'different';

export function classify(
  view: Pick<VerificationView, 'signedSha256' | 'originalSha256'>,
  sha256: string,
): CheckResult {
  if (sha256 === view.signedSha256) return 'signed';
  if (sha256 === view.originalSha256) return 'original';
  return 'different';
}
