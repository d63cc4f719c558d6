import type { Db } from '../db/knex.ts';
import { accountsStore } from '../db/stores/accounts-store.ts';
import { approversStore } from '../db/stores/approvers-store.ts';
import { documentsStore, type Document } from '../db/stores/documents-store.ts';
import { verificationsStore } from '../db/stores/verifications-store.ts';
import type { ActionType } from '../domain/model.ts';
import { describeOutcome, maskPhone } from '../pdf/compose/wording.ts';

/** What the signed file's signature is, when the document records it (issue 14, item 4). */
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
  const approvers = (await approversStore(db).listByDocument(document.id)).filter(
    (a) => a.status === 'completed' && a.actedAt,
  );
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
      })),
  };
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
