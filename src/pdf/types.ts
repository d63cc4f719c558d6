/** Inputs of the final-PDF module: plain data, so the activity, the tests and the benchmark build them alike. */
import type { ActionType, ApprovalChannel, ResolvedPlacement, VerifiedBy } from '../domain/model.ts';
import type { SignatureLevel } from './ltv/extend.ts';
import type { RevocationOptions } from './ltv/revocation.ts';
import type { Signer } from './sign/signer.ts';

export type { ActionType, ApprovalChannel };

/**
 * Where an approver's mark goes instead of the signatures page: PDF points on the page as displayed (x from the
 * left edge, y from the bottom edge, page 1-based); the height follows the image's aspect ratio.
 */
export type Placement = ResolvedPlacement;

export interface FinalizeApprover {
  nameAr: string;
  nameEn: string;
  roleAr?: string | null;
  roleEn?: string | null;
  /** E.164 digits without '+', as stored; shown masked. */
  phone: string;
  actionType: ActionType;
  order: number;
  /** 'completed' for every approver of an approved document; anything else is printed as it is. */
  status: string;
  actedAt: Date;
  channel: ApprovalChannel;
  /** Page actions only. */
  ip?: string | null;
  userAgent?: string | null;
  /** WhatsApp button actions only. */
  whatsappMessageId?: string | null;
  /** sign: a drawn signature (PNG) or a typed name. */
  signaturePng?: Uint8Array | null;
  typedName?: string | null;
  /** stamp: an uploaded stamp (PNG) or a seal generated from the account and approver. */
  stampPng?: Uint8Array | null;
  generatedSeal?: boolean;
  placement?: Placement | null;
  /** How the approver was verified; absent is printed as none. */
  verifiedBy?: VerifiedBy | null;
  /** The reminders sent to the approver, oldest first (manual, automatic, "expires tomorrow"); absent: none. */
  reminders?: { at: Date; kind: 'manual' | 'automatic' | 'expires_tomorrow' }[];
  /**
   * A delegate: the approvers who handed this step on, first one first, each with when and why;
   * printed in this approver's block.
   */
  delegatedFrom?: DelegationRecord[];
}

export interface DelegationRecord {
  nameAr: string;
  nameEn: string;
  /** Shown masked, like the approver's. */
  phone: string;
  at: Date;
  reason: string | null;
  verifiedBy?: VerifiedBy | null;
}

export interface FinalizeDocumentInfo {
  reference: string;
  titleAr: string;
  titleEn: string;
  createdAt: Date;
  sentAt: Date;
  completedAt: Date;
  /** Lowercase hex SHA-256 of the uploaded file, as recorded at upload. */
  originalSha256: string;
  accountName: string;
  /**
   * `{PUBLIC_BASE_URL}/v/{token}`, the public verification page: printed on the certificate's first page with
   * its QR code. Absent: no verification block.
   */
  verificationUrl?: string;
}

export interface FinalizeInput {
  original: Uint8Array;
  document: FinalizeDocumentInfo;
  approvers: FinalizeApprover[];
  signer: Signer;
  options?: {
    /** RFC 3161 time-stamp authority; adds a signature time-stamp (PAdES B-T and above). */
    tsaUrl?: string;
    /**
     * The PAdES level to produce (SIGNATURE_LEVEL); default B-T with a tsaUrl, else B-B. B-T, B-LT and B-LTA need
     * tsaUrl; B-LT and B-LTA fetch revocation data (within `revocation`'s limits).
     */
    signatureLevel?: SignatureLevel;
    /** Time-outs, retries and size limit of OCSP and CRL fetching (REVOCATION_*). */
    revocation?: RevocationOptions;
    /** Milliseconds to wait for the time-stamp authority. */
    tsaTimeoutMs?: number;
    /** The signing time written into the signature dictionary; defaults to document.completedAt. */
    now?: Date;
    /** Largest width and height of a signature or stamp image (MAX_IMAGE_SIDE_PX); default 4096. */
    maxImageSidePx?: number;
  };
}

export type { SignatureLevel };

export interface FinalizeResult {
  pdf: Buffer;
  sha256: string;
  pageCount: number;
  /** The signing time written in the signature dictionary (/M). */
  signedAt: Date;
  /** Subject of the time-stamp authority's certificate when a time-stamp was embedded, else null. */
  timestampAuthority: string | null;
  /** What was made differently from the input (an unreadable image drawn as the name), for the log. */
  warnings: string[];
  /** The PAdES baseline level the file was signed at. */
  signatureLevel: SignatureLevel;
  /** B-LTA: when the certificate of the document time-stamp's authority expires (archive renewal is due before). */
  archiveTimestampExpiresAt?: Date;
}
