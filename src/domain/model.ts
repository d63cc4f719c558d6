/** The document lifecycle of the specification (docs/product-rules.md §3). */
export const DOCUMENT_STATUSES = [
  'draft',
  'pending',
  'in_progress',
  'approved',
  'rejected',
  'expired',
  'voided',
] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export const WORKFLOW_TYPES = ['sequential', 'parallel'] as const;
export type WorkflowType = (typeof WORKFLOW_TYPES)[number];

export const ACTION_TYPES = ['sign', 'stamp', 'approve_only', 'review_only'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export const LANGUAGES = ['ar', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * Where an approver stands: `waiting` until the approval workflow notifies them, then `notified`, and finally
 * `completed` or `rejected` — or `delegated` when they handed their step to someone else: their
 * link is spent like an approver's who acted, and the delegate's row (same `order_index`) takes their place. The
 * workflow owns every move after `waiting`.
 */
export const APPROVER_STATUSES = ['waiting', 'notified', 'completed', 'rejected', 'delegated'] as const;
export type ApproverStatus = (typeof APPROVER_STATUSES)[number];

/** How an approver acted: a WhatsApp button reply or the approval page. */
export const APPROVAL_CHANNELS = ['whatsapp', 'page'] as const;
export type ApprovalChannel = (typeof APPROVAL_CHANNELS)[number];

export type ActionKind = 'complete' | 'reject';

/** What an approver did and how: kept for the audit certificate (in PostgreSQL, never in a workflow history). */
/** How an approver must prove they hold their WhatsApp number before acting on the page. */
export const VERIFICATIONS = ['none', 'whatsapp_otp'] as const;
export type Verification = (typeof VERIFICATIONS)[number];
/** How an approver that acted was verified: a one-time code, their own WhatsApp reply, or not at all. */
export const VERIFIED_BY = ['none', 'whatsapp_otp', 'whatsapp_reply'] as const;
export type VerifiedBy = (typeof VERIFIED_BY)[number];

export interface ActionEvidence {
  /** ISO 8601 time the service received the action. */
  at: string;
  channel: ApprovalChannel;
  ip?: string;
  userAgent?: string;
  /** WhatsApp message id of a button reply. */
  messageId?: string;
  /** Storage key of a drawn signature or an uploaded stamp image. */
  imageKey?: string;
  typedName?: string;
  generatedSeal?: boolean;
  reason?: string;
  /** How the approver was verified (page actions); a WhatsApp reply is `whatsapp_reply` by itself. */
  verifiedBy?: VerifiedBy;
}

/** The messages an approver can be sent. */
export const NOTICE_KINDS = ['approval_request', 'reminder', 'voided', 'rejected', 'signed_copy'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/** Bounds of docs/product-rules.md §2, in one place for the schemas, the services and the OpenAPI text. */
export const LIMITS = {
  textMax: 255,
  approversMax: 50,
  orderMax: 50,
  expiresInDaysMin: 1,
  expiresInDaysMax: 365,
  expiresInDaysDefault: 7,
  perPageDefault: 15,
  perPageMax: 100,
  /** PDF user space is at most 14 400 units across (ISO 32000 annex C). */
  placementMax: 14_400,
  /** Automatic reminders: hours before the first and between the next ones (up to a year). */
  reminderHoursMax: 8_760,
  /** A delegation's reason, in characters (the approval page's delegation step). */
  delegationReasonMax: 500,
  /** The static ceiling of `reminders.max` (REMIND_MAX_PER_APPROVER, the configured cap, is checked too). */
  remindersMaxCeiling: 100,
  /** Recipients of the signed copy besides the approvers (`cc` on a document). */
  ccMax: 10,
} as const;

/**
 * Someone besides the approvers who receives the signed PDF over WhatsApp once the document is approved. Never an approver of the same document: that phone already gets the approver's own copy.
 */
export interface CcRecipient {
  /** E.164 digits without the plus sign. */
  phone: string;
  /** Language of the message; null means automatic (Arabic for Saudi numbers, else English). */
  language: Language | null;
  /** The name the message greets; null: a generic greeting. */
  name: string | null;
}

/**
 * A document's automatic reminders: the first `first_after_hours` after an approver's
 * notification, then every `every_hours`, at most `max` in all; with `max` of 1 or more also one "expires
 * tomorrow" reminder 24 hours before the deadline. `max: 0` turns them off.
 */
export interface ReminderSettings {
  first_after_hours: number;
  every_hours: number;
  max: number;
}

/** An optional signature position on the original pages, in PDF points from the bottom-left corner. */
export interface Placement {
  page: number;
  x: number;
  y: number;
  width: number | null;
}

/**
 * What a client chooses about an approver (docs/product-rules.md §2); everything else about an approver (status,
 * link, evidence) is the workflow's.
 */
export interface ApproverFields {
  nameAr: string;
  nameEn: string;
  /** E.164 digits without the plus sign. */
  phone: string;
  roleAr: string | null;
  roleEn: string | null;
  /** Language of messages and page; null means automatic (Arabic for Saudi numbers, else English). */
  language: Language | null;
  actionType: ActionType;
  orderIndex: number;
  placement: Placement | null;
  /** Absent on create: the account's default. */
  verification?: Verification;
  /** False: Wathiq sends this approver no WhatsApp message (the account shows the link itself); default true. */
  notify?: boolean;
}

/** A placement with its width decided (the approver's, or the default for the mark): what the final PDF draws. */
export type ResolvedPlacement = Omit<Placement, 'width'> & { width: number };
