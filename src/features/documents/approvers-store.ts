import type { ApproverFields } from '../../domain/model.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { randomToken, sha256Hex } from '../../auth/tokens.ts';
import type { Db } from '../../db/knex.ts';
import { named } from '../../db/prepared.ts';
import { approverLinkContext, storedToken } from '../../db/sealed-columns.ts';
import {
  APPROVER_COLUMNS,
  LINK_TOKEN_BYTES,
  openLinkToken,
  ORDER,
  toApprover,
  toRowPatch,
  type Approver,
  type ApproverPatch,
  type ApproverRow,
} from './approvers-rows.ts';

export {
  LINK_TOKEN_BYTES,
  openLinkToken,
  toApprover,
  type Approver,
  type ApproverPatch,
  type ApproverRow,
} from './approvers-rows.ts';

/** Approvers, always read in `order_index` order. */
export function approversStore(db: Db) {
  return {
    ...approverInserts(db),
    ...approverReads(db),
    ...whatsAppIdentities(db),
    ...approverChanges(db),
    ...linkTokens(db),
    ...approverMarks(db),
    ...approverRemovals(db),
  };
}

/** New approvers: a draft's, and a delegate in place of one. */
function approverInserts(db: Db) {
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
     * A delegate's row, with the id the delegation reserved: `from`'s place in the order, action,
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
  };
}

/** Approvers read by document, by id, or by link token. */
function approverReads(db: Db) {
  return {
    async listByDocument(documentId: string): Promise<Approver[]> {
      // The read a document's run makes most: named, so each connection plans it once.
      const rows = await db('approvers')
        .select<ApproverRow[]>(APPROVER_COLUMNS)
        .where({ document_id: documentId })
        .orderBy([...ORDER])
        .options(named('approvers_of_document'));
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
  };
}

/** The WhatsApp identity an approver answers from. */
function whatsAppIdentities(db: Db) {
  return {
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
  };
}

/** How many approvers a document has, and an approver's fields changed. */
function approverChanges(db: Db) {
  return {
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
  };
}

/** Approvers' link tokens, each issued once. */
function linkTokens(db: Db) {
  return {
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

    /**
     * Gives every approver of the document who has no link token one (at send: links exist from then on).
     * `approvers`: the document's rows as the caller read them under its row lock, so they are not read again.
     */
    async issueLinkTokens(
      documentId: string,
      secrets: SecretBox,
      approvers?: readonly Approver[],
    ): Promise<number> {
      const ids = approvers
        ? approvers.filter((a) => a.linkTokenSealed === null).map((a) => a.id)
        : await db('approvers')
            .where({ document_id: documentId })
            .whereNull('link_token_sha256')
            .pluck<string[]>('id');
      if (ids.length === 0) return 0;
      // Each token is sealed to its approver's id, so they are made here and written in one statement.
      const stored = ids.map((id) =>
        storedToken(secrets, randomToken(LINK_TOKEN_BYTES), approverLinkContext(id)),
      );
      const { rowCount } = await db.raw<{ rowCount: number | null }>(
        `UPDATE approvers a SET link_token_sha256 = t.sha256, link_token_sealed = t.sealed
           FROM unnest(?::uuid[], ?::text[], ?::text[]) AS t(id, sha256, sealed)
          WHERE a.id = t.id AND a.link_token_sha256 IS NULL`,
        [ids, stored.map((t) => t.sha256), stored.map((t) => t.sealed)],
      );
      return rowCount ?? 0;
    },
  };
}

/** What happened to an approver: notified, stamped with the generated seal. */
function approverMarks(db: Db) {
  return {
    /**
     * `waiting` → `notified`, with how the notification went, and the row as it now reads; an approver past
     * `waiting` is left alone (undefined).
     */
    async markNotified(
      id: string,
      notification: { status: string; error: string | null },
    ): Promise<Approver | undefined> {
      const [row] = await db('approvers')
        .where({ id, status: 'waiting' })
        .update({
          status: 'notified',
          notified_at: db.fn.now(),
          notification_status: notification.status,
          notification_error: notification.error,
          updated_at: db.fn.now(),
        })
        .returning<ApproverRow[]>('*');
      return row && toApprover(row);
    },
  };
}

/** Approvers removed from a draft. */
function approverRemovals(db: Db) {
  return {
    async delete(id: string): Promise<boolean> {
      return (await db('approvers').where({ id }).delete()) > 0;
    },

    async deleteByDocument(documentId: string): Promise<number> {
      return db('approvers').where({ document_id: documentId }).delete();
    },
  };
}

export type ApproversStore = ReturnType<typeof approversStore>;
