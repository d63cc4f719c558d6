import type { VerifiedBy } from '../../domain/model.ts';
import type { Db } from '../../db/knex.ts';

/**
 * Delegations as approvers ask for them (migration 022), kept here rather than in the approval workflow's history:
 * the approval page writes a row (the delegate's name and phone, the reason, the time, IP address, user agent)
 * before asking the workflow to take the delegation, and passes its id; recordDelegation copies it onto the
 * approvers and marks it accepted. A refused row is deleted; a row whose answer was lost is settled later, when
 * the page reconciles it (`not_taken`, migration 026). Every function takes the pool or a transaction.
 */
/**
 * `submitted` until settled: `accepted` (the workflow took it) or `not_taken` (Temporal does not know its update:
 * never delivered, or refused). A refusal the page hears deletes the row instead.
 */
export type DelegationState = 'submitted' | 'accepted' | 'not_taken';

export interface Delegation {
  id: string;
  documentId: string;
  fromApproverId: string;
  /** The id the delegate's approver row gets. */
  delegateId: string;
  state: DelegationState;
  name: string;
  /** E.164 digits without the plus sign. */
  phone: string;
  reason: string | null;
  at: Date;
  ip: string | null;
  userAgent: string | null;
  verifiedBy: VerifiedBy | null;
  createdAt: Date;
  settledAt: Date | null;
}

interface DelegationRow {
  id: string;
  document_id: string;
  from_approver_id: string;
  delegate_id: string;
  state: DelegationState;
  name: string;
  phone: string;
  reason: string | null;
  delegated_at: Date;
  ip: string | null;
  user_agent: string | null;
  verified_by: VerifiedBy | null;
  created_at: Date;
  settled_at: Date | null;
}

const TABLE = 'approver_delegations';

const toDelegation = (r: DelegationRow): Delegation => ({
  id: r.id,
  documentId: r.document_id,
  fromApproverId: r.from_approver_id,
  delegateId: r.delegate_id,
  state: r.state,
  name: r.name,
  phone: r.phone,
  reason: r.reason,
  at: r.delegated_at,
  ip: r.ip,
  userAgent: r.user_agent,
  verifiedBy: r.verified_by,
  createdAt: r.created_at,
  settledAt: r.settled_at,
});

export function delegationsStore(db: Db) {
  return {
    async submit(input: Omit<Delegation, 'id' | 'state' | 'createdAt' | 'settledAt'>): Promise<Delegation> {
      const [row] = await db<DelegationRow>(TABLE)
        .insert({
          document_id: input.documentId,
          from_approver_id: input.fromApproverId,
          delegate_id: input.delegateId,
          name: input.name,
          phone: input.phone,
          reason: input.reason,
          delegated_at: input.at,
          ip: input.ip,
          user_agent: input.userAgent,
          verified_by: input.verifiedBy,
        })
        .returning('*');
      return toDelegation(row!);
    },

    async find(id: string): Promise<Delegation | undefined> {
      const row = await db<DelegationRow>(TABLE).where({ id }).first();
      return row && toDelegation(row);
    },

    /** Phones of the document's delegations not yet taken by the workflow (a delegate-to-be is taken). */
    async pendingPhones(documentId: string): Promise<string[]> {
      return db(TABLE).where({ document_id: documentId, state: 'submitted' }).pluck('phone');
    },

    /** The document's rows still `submitted`, oldest first: taken, being taken, or left by a lost answer. */
    async submitted(documentId: string): Promise<Delegation[]> {
      const rows = await db<DelegationRow>(TABLE)
        .where({ document_id: documentId, state: 'submitted' })
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);
      return rows.map(toDelegation);
    },

    /** The workflow took it (from any state: the workflow's word wins over a reconciliation's guess). */
    async markAccepted(id: string): Promise<void> {
      await db(TABLE).where({ id }).update({ state: 'accepted', settled_at: db.fn.now() });
    },

    /** Temporal does not know the row's update: the workflow never took it. Only a `submitted` row changes. */
    async markNotTaken(id: string): Promise<boolean> {
      const n = await db(TABLE)
        .where({ id, state: 'submitted' })
        .update({ state: 'not_taken', settled_at: db.fn.now() });
      return n > 0;
    },

    /** A delegation the workflow refused: nothing of it stays. */
    async discard(id: string): Promise<void> {
      await db(TABLE).where({ id, state: 'submitted' }).delete();
    },
  };
}
