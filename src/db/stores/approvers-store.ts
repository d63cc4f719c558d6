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
import { randomToken, sha256Hex } from '../../auth/tokens.ts';
import type { Db } from '../knex.ts';
import { approverLinkContext, storedToken } from '../sealed-columns.ts';

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
  delegated_to_id?: string | null;
  delegated_from_id?: string | null;
  delegation_reason?: string | null;
  created_at: Date;
  updated_at: Date;
}

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
};

function toRowPatch(patch: ApproverPatch): Partial<ApproverRow> {
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

const ORDER = [
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

/** Approvers, always read in `order_index` order. */
export function approversStore(db: Db) {
  return {
    async insertMany(
      document: { id: string; accountId: string },
      approvers: readonly ApproverFields[],
    ): Promise<Approver[]> {
      if (approvers.length === 0) return [];
      const rows = await db<ApproverRow>('approvers')
        .insert(
          approvers.map((a) => ({
            document_id: document.id,
            account_id: document.accountId,
            ...toRowPatch({ ...a, placement: a.placement }),
            // Not given: the account's default (migration 019).
            verification:
              a.verification ??
              db.raw('(SELECT default_verification FROM accounts WHERE id = ?)', [document.accountId]),
            status: 'waiting' as const,
          })),
        )
        .returning('*');
      return rows.map(toApprover).sort((a, b) => a.orderIndex - b.orderIndex);
    },

    /**
     * A delegate's row (issue 15 item 3), with the id the delegation reserved: `from`'s place in the order, action,
     * placement, verification and notify; named and reached as the delegating approver gave; `waiting`.
     */
    async insertDelegate(
      from: Approver,
      delegate: { id: string; name: string; phone: string },
    ): Promise<Approver> {
      const [row] = await db<ApproverRow>('approvers')
        .insert({
          id: delegate.id,
          document_id: from.documentId,
          account_id: from.accountId,
          ...toRowPatch({
            nameAr: delegate.name,
            nameEn: delegate.name,
            phone: delegate.phone,
            roleAr: null,
            roleEn: null,
            language: null,
            actionType: from.actionType,
            orderIndex: from.orderIndex,
            placement: from.placement,
            verification: from.verification,
            notify: from.notify,
            delegatedFromId: from.id,
          }),
          status: 'waiting',
        })
        .returning('*');
      return toApprover(row!);
    },

    async listByDocument(documentId: string): Promise<Approver[]> {
      const rows = await db<ApproverRow>('approvers')
        .where({ document_id: documentId })
        .orderBy([...ORDER]);
      return rows.map(toApprover);
    },

    /** Approvers of several documents at once (list pages), grouped by document id. */
    async listByDocuments(documentIds: readonly string[]): Promise<Map<string, Approver[]>> {
      const grouped = new Map<string, Approver[]>(documentIds.map((id) => [id, []]));
      if (documentIds.length === 0) return grouped;
      const rows = await db<ApproverRow>('approvers')
        .whereIn('document_id', [...documentIds])
        .orderBy([{ column: 'document_id' }, ...ORDER]);
      for (const row of rows) grouped.get(row.document_id)?.push(toApprover(row));
      return grouped;
    },

    async findById(accountId: string, id: string): Promise<Approver | undefined> {
      const row = await db<ApproverRow>('approvers').where({ id, account_id: accountId }).first();
      return row && toApprover(row);
    },

    async findByIdUnscoped(id: string): Promise<Approver | undefined> {
      const row = await db<ApproverRow>('approvers').where({ id }).first();
      return row && toApprover(row);
    },

    /** Looked up by the token's SHA-256: the table holds no usable token. */
    async findByLinkToken(token: string): Promise<Approver | undefined> {
      const row = await db<ApproverRow>('approvers')
        .where({ link_token_sha256: sha256Hex(token) })
        .first();
      return row && toApprover(row);
    },

    /**
     * Whether a reply matched earlier to this number in this account carried one of these ids (migration 021): how
     * a reply without the phone number (a WhatsApp username user) is recognised.
     */
    async knowsWhatsAppIdentity(
      accountId: string,
      phone: string,
      ids: { waId?: string; userId?: string },
    ): Promise<boolean> {
      if (ids.waId === undefined && ids.userId === undefined) return false;
      const row = await db('approvers')
        .where({ account_id: accountId, phone })
        .where((q) => {
          if (ids.waId !== undefined) void q.orWhere('wa_id', ids.waId);
          if (ids.userId !== undefined) void q.orWhere('whatsapp_user_id', ids.userId);
        })
        .first<{ id: string } | undefined>('id');
      return row !== undefined;
    },

    /**
     * Stores the ids of a reply matched to the approver, each only where none is stored yet: the first seen wins,
     * so a later reply cannot rebind the approver to another WhatsApp account.
     */
    async rememberWhatsAppIdentity(id: string, ids: { waId?: string; userId?: string }): Promise<void> {
      if (ids.waId === undefined && ids.userId === undefined) return;
      await db('approvers')
        .where({ id })
        .update({
          ...(ids.waId !== undefined && { wa_id: db.raw('coalesce(wa_id, ?)', [ids.waId]) }),
          ...(ids.userId !== undefined && {
            whatsapp_user_id: db.raw('coalesce(whatsapp_user_id, ?)', [ids.userId]),
          }),
        });
    },

    async countByDocument(documentId: string): Promise<number> {
      const [row] = await db('approvers')
        .where({ document_id: documentId })
        .count<{ count: number | string }[]>({ count: '*' });
      return Number(row?.count ?? 0);
    },

    async update(id: string, patch: ApproverPatch): Promise<Approver | undefined> {
      const [row] = await db('approvers')
        .where({ id })
        .update({ ...toRowPatch(patch), updated_at: db.fn.now() })
        .returning<ApproverRow[]>('*');
      return row && toApprover(row);
    },

    /**
     * Gives the approver a link token unless they have one, and returns the token they have: a concurrent or
     * retried caller gets the first one's. Undefined when there is no such approver.
     */
    async ensureLinkToken(id: string, secrets: SecretBox): Promise<string | undefined> {
      const stored = storedToken(secrets, randomToken(LINK_TOKEN_BYTES), approverLinkContext(id));
      await db('approvers')
        .where({ id })
        .whereNull('link_token_sha256')
        .update({ link_token_sha256: stored.sha256, link_token_sealed: stored.sealed });
      const row = await db<ApproverRow>('approvers').where({ id }).first();
      return row ? openLinkToken(toApprover(row), secrets) : undefined;
    },

    /** Gives every approver of the document who has no link token one (at send: links exist from then on). */
    async issueLinkTokens(documentId: string, secrets: SecretBox): Promise<number> {
      const ids = await db('approvers')
        .where({ document_id: documentId })
        .whereNull('link_token_sha256')
        .pluck<string[]>('id');
      let issued = 0;
      for (const id of ids) {
        const stored = storedToken(secrets, randomToken(LINK_TOKEN_BYTES), approverLinkContext(id));
        issued += await db('approvers')
          .where({ id })
          .whereNull('link_token_sha256')
          .update({ link_token_sha256: stored.sha256, link_token_sealed: stored.sealed });
      }
      return issued;
    },

    /** `waiting` → `notified`, with how the notification went; an approver past `waiting` is left alone. */
    async markNotified(id: string, notification: { status: string; error: string | null }): Promise<void> {
      await db('approvers').where({ id, status: 'waiting' }).update({
        status: 'notified',
        notified_at: db.fn.now(),
        notification_status: notification.status,
        notification_error: notification.error,
        updated_at: db.fn.now(),
      });
    },

    /** The approver stamped with the seal generated from the account and their name (no uploaded image). */
    async markGeneratedSeal(id: string): Promise<void> {
      await db('approvers').where({ id }).update({ generated_seal: true });
    },

    /** Ids of a document's approvers who stamped with the generated seal. */
    async generatedSealIds(documentId: string): Promise<Set<string>> {
      const rows = await db('approvers')
        .where({ document_id: documentId, generated_seal: true })
        .select<{ id: string }[]>('id');
      return new Set(rows.map((r) => r.id));
    },

    async delete(id: string): Promise<boolean> {
      return (await db('approvers').where({ id }).delete()) > 0;
    },

    async deleteByDocument(documentId: string): Promise<number> {
      return db('approvers').where({ document_id: documentId }).delete();
    },
  };
}

export type ApproversStore = ReturnType<typeof approversStore>;
