import type {
  ActionType,
  ApproverFields,
  ApproverStatus,
  Language,
  Placement,
  Verification,
  VerifiedBy,
} from '../../domain/model.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { allColumns } from '../../db/prepared.ts';
import { approverLinkContext } from '../../db/sealed-columns.ts';

/** An approver as the app sees it and as its row stores it, and the columns a patch may change. */

export interface Approver extends ApproverFields {
  id: string;
  documentId: string;
  accountId: string;
  status: ApproverStatus;
  /** The link token's read-back copy, sealed (`openLinkToken`); null until the document is sent. */
  linkTokenSealed: string | null;
  notify: boolean;
  notifiedAt: Date | null;
  notificationStatus: string | null;
  notificationError: string | null;
  actedAt: Date | null;
  actionChannel: string | null;
  actionIp: string | null;
  actionUserAgent: string | null;
  actionMessageId: string | null;
  signatureKey: string | null;
  typedName: string | null;
  rejectionReason: string | null;
  verification: Verification;
  verifiedBy: VerifiedBy | null;
  /** Stamped with the seal generated from the account and their name (no uploaded image). */
  generatedSeal: boolean;
  /** Delegation (migration 022): set on the approver who delegated, to the delegate's row. */
  delegatedToId: string | null;
  /** Set on a delegate's row, to the approver who delegated to them. */
  delegatedFromId: string | null;
  delegationReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApproverRow {
  id: string;
  document_id: string;
  account_id: string;
  name_ar: string;
  name_en: string;
  phone: string;
  role_ar: string | null;
  role_en: string | null;
  language: Language | null;
  action_type: ActionType;
  order_index: number;
  placement_page: number | null;
  placement_x: number | null;
  placement_y: number | null;
  placement_width: number | null;
  status: ApproverStatus;
  link_token_sha256?: string | null;
  link_token_sealed?: string | null;
  notify: boolean;
  notified_at: Date | null;
  notification_status: string | null;
  notification_error: string | null;
  acted_at: Date | null;
  action_channel: string | null;
  action_ip: string | null;
  action_user_agent: string | null;
  action_message_id: string | null;
  signature_key: string | null;
  typed_name: string | null;
  rejection_reason: string | null;
  verification: Verification;
  verified_by: VerifiedBy | null;
  generated_seal: boolean;
  delegated_to_id?: string | null;
  delegated_from_id?: string | null;
  delegation_reason?: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Every column `ApproverRow` holds, for statements that name them (a named statement never selects `*`). */
export const APPROVER_COLUMNS = allColumns<ApproverRow>()([
  'id',
  'document_id',
  'account_id',
  'name_ar',
  'name_en',
  'phone',
  'role_ar',
  'role_en',
  'language',
  'action_type',
  'order_index',
  'placement_page',
  'placement_x',
  'placement_y',
  'placement_width',
  'status',
  'link_token_sha256',
  'link_token_sealed',
  'notify',
  'notified_at',
  'notification_status',
  'notification_error',
  'acted_at',
  'action_channel',
  'action_ip',
  'action_user_agent',
  'action_message_id',
  'signature_key',
  'typed_name',
  'rejection_reason',
  'verification',
  'verified_by',
  'generated_seal',
  'delegated_to_id',
  'delegated_from_id',
  'delegation_reason',
  'created_at',
  'updated_at',
]);

export const toApprover = (r: ApproverRow): Approver => ({
  id: r.id,
  documentId: r.document_id,
  accountId: r.account_id,
  nameAr: r.name_ar,
  nameEn: r.name_en,
  phone: r.phone,
  roleAr: r.role_ar,
  roleEn: r.role_en,
  language: r.language,
  actionType: r.action_type,
  orderIndex: r.order_index,
  placement:
    r.placement_page !== null && r.placement_x !== null && r.placement_y !== null
      ? { page: r.placement_page, x: r.placement_x, y: r.placement_y, width: r.placement_width }
      : null,
  status: r.status,
  linkTokenSealed: r.link_token_sealed ?? null,
  notify: r.notify,
  notifiedAt: r.notified_at,
  notificationStatus: r.notification_status,
  notificationError: r.notification_error,
  actedAt: r.acted_at,
  actionChannel: r.action_channel,
  actionIp: r.action_ip,
  actionUserAgent: r.action_user_agent,
  actionMessageId: r.action_message_id,
  signatureKey: r.signature_key,
  typedName: r.typed_name,
  rejectionReason: r.rejection_reason,
  verification: r.verification,
  verifiedBy: r.verified_by,
  generatedSeal: r.generated_seal,
  delegatedToId: r.delegated_to_id ?? null,
  delegatedFromId: r.delegated_from_id ?? null,
  delegationReason: r.delegation_reason ?? null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Everything but identity and bookkeeping; the link token is set only by `ensureLinkToken` / `issueLinkTokens`. */
export type ApproverPatch = Partial<
  Omit<Approver, 'id' | 'documentId' | 'accountId' | 'createdAt' | 'updatedAt' | 'linkTokenSealed'>
>;

const COLUMNS: Record<Exclude<keyof ApproverPatch, 'placement'>, keyof ApproverRow> = {
  nameAr: 'name_ar',
  nameEn: 'name_en',
  phone: 'phone',
  roleAr: 'role_ar',
  roleEn: 'role_en',
  language: 'language',
  actionType: 'action_type',
  orderIndex: 'order_index',
  status: 'status',
  notify: 'notify',
  notifiedAt: 'notified_at',
  notificationStatus: 'notification_status',
  notificationError: 'notification_error',
  actedAt: 'acted_at',
  actionChannel: 'action_channel',
  actionIp: 'action_ip',
  actionUserAgent: 'action_user_agent',
  actionMessageId: 'action_message_id',
  signatureKey: 'signature_key',
  typedName: 'typed_name',
  rejectionReason: 'rejection_reason',
  verification: 'verification',
  verifiedBy: 'verified_by',
  delegatedToId: 'delegated_to_id',
  delegatedFromId: 'delegated_from_id',
  delegationReason: 'delegation_reason',
  generatedSeal: 'generated_seal',
};

export function toRowPatch(patch: ApproverPatch): Partial<ApproverRow> {
  const row: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (field === 'placement') {
      const p = value as Placement | null;
      row.placement_page = p?.page ?? null;
      row.placement_x = p?.x ?? null;
      row.placement_y = p?.y ?? null;
      row.placement_width = p?.width ?? null;
      continue;
    }
    const column = COLUMNS[field as keyof typeof COLUMNS];
    if (!column) throw new Error(`approversStore: unknown field ${field}`);
    row[column] = value;
  }
  return row;
}

export const ORDER = [
  { column: 'order_index', order: 'asc' },
  { column: 'created_at', order: 'asc' },
  { column: 'id', order: 'asc' },
] as const;

/** 32 random bytes: 43 base64url characters (the approval page accepts exactly that shape). */
export const LINK_TOKEN_BYTES = 32;

/** The approver's link token, opened from its sealed copy; undefined when they have none yet. */
export function openLinkToken(approver: Approver, secrets: SecretBox): string | undefined {
  return approver.linkTokenSealed === null
    ? undefined
    : secrets.open(approver.linkTokenSealed, approverLinkContext(approver.id));
}
