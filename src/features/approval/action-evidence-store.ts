import { randomUUID } from 'node:crypto';
import type { ActionEvidence, ActionKind, ApprovalChannel, VerifiedBy } from '../../domain/model.ts';
import type { Db } from '../../db/knex.ts';

/**
 * The evidence of approvers' actions (migration 012), kept here rather than in the approval workflow's history:
 * the page and the WhatsApp webhook write a row before asking the workflow to take the action, and pass its id.
 * Every function takes the pool or a transaction.
 */
export interface StoredEvidence {
  id: string;
  documentId: string;
  approverId: string;
  kind: ActionKind;
  state: 'submitted' | 'accepted';
  evidence: ActionEvidence;
}

interface EvidenceRow {
  id: string;
  document_id: string;
  approver_id: string;
  kind: ActionKind;
  state: 'submitted' | 'accepted';
  acted_at: Date;
  channel: ApprovalChannel;
  ip: string | null;
  user_agent: string | null;
  message_id: string | null;
  image_key: string | null;
  typed_name: string | null;
  generated_seal: boolean;
  reason: string | null;
  verified_by: VerifiedBy | null;
  created_at: Date;
}

const TABLE = 'approver_action_evidence';

/** Where PostgreSQL announces, on commit, an evidence row becoming `accepted` (its id; migration 028). */
export const EVIDENCE_ACCEPTED_CHANNEL = 'wathiq_evidence_accepted';

const toStored = (r: EvidenceRow): StoredEvidence => ({
  id: r.id,
  documentId: r.document_id,
  approverId: r.approver_id,
  kind: r.kind,
  state: r.state,
  evidence: {
    at: r.acted_at.toISOString(),
    channel: r.channel,
    ...(r.ip !== null && { ip: r.ip }),
    ...(r.user_agent !== null && { userAgent: r.user_agent }),
    ...(r.message_id !== null && { messageId: r.message_id }),
    ...(r.image_key !== null && { imageKey: r.image_key }),
    ...(r.typed_name !== null && { typedName: r.typed_name }),
    ...(r.generated_seal && { generatedSeal: true }),
    ...(r.reason !== null && { reason: r.reason }),
    ...(r.verified_by !== null && { verifiedBy: r.verified_by }),
  },
});

/** What an action came with, for a new row: its id is chosen by the caller, so it can look for the row later. */
export interface NewEvidence {
  id: string;
  documentId: string;
  approverId: string;
  kind: ActionKind;
  evidence: ActionEvidence;
}

const toRow = (input: NewEvidence) => {
  const e = input.evidence;
  return {
    id: input.id,
    document_id: input.documentId,
    approver_id: input.approverId,
    kind: input.kind,
    acted_at: new Date(e.at),
    channel: e.channel,
    ip: e.ip ?? null,
    user_agent: e.userAgent ?? null,
    message_id: e.messageId ?? null,
    image_key: e.imageKey ?? null,
    typed_name: e.typedName ?? null,
    generated_seal: e.generatedSeal === true,
    reason: e.reason ?? null,
    verified_by: e.verifiedBy ?? null,
  };
};

export function actionEvidenceStore(db: Db) {
  return {
    /**
     * Records what an action came with, `submitted`, for a run that is given the row's id (the act update); returns
     * the id (a new one when none is given).
     */
    async submit(input: Omit<NewEvidence, 'id'> & { id?: string }): Promise<string> {
      const id = input.id ?? randomUUID();
      await db<EvidenceRow>(TABLE).insert(toRow({ ...input, id }));
      return id;
    },

    /**
     * Records what an action came with as `accepted` at once, in the transaction that decides and writes the
     * action (act-in-database.ts): a refusal or a failure rolls the row back with the action, so no row is ever
     * left `submitted` for it, and one INSERT does what a submit before the transaction and an accepting UPDATE in
     * it did.
     */
    async recordAccepted(input: NewEvidence): Promise<StoredEvidence> {
      const [row] = await db<EvidenceRow>(TABLE)
        .insert({ ...toRow(input), state: 'accepted' })
        .returning('*');
      return toStored(row!);
    },

    async find(id: string): Promise<StoredEvidence | undefined> {
      const row = await db<EvidenceRow>(TABLE).where({ id }).first();
      return row && toStored(row);
    },

    /** The workflow took the action this row came with (called in the transaction that records the action). */
    async markAccepted(id: string): Promise<void> {
      await db(TABLE).where({ id }).update({ state: 'accepted' });
    },

    /** The workflow refused the action: its evidence goes (an accepted row is never removed). */
    async discard(id: string): Promise<void> {
      await db(TABLE).where({ id, state: 'submitted' }).delete();
    },

    /** The approver's latest row still `submitted` for this kind of action. */
    async latestSubmitted(approverId: string, kind: ActionKind): Promise<StoredEvidence | undefined> {
      const row = await db<EvidenceRow>(TABLE)
        .where({ approver_id: approverId, kind, state: 'submitted' })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .first();
      return row && toStored(row);
    },

    /** The accepted rows of a document's approvers: the actions taken on it, oldest first. */
    async acceptedOn(documentId: string): Promise<StoredEvidence[]> {
      const rows = await db<EvidenceRow>(TABLE)
        .where({ document_id: documentId, state: 'accepted' })
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);
      return rows.map(toStored);
    },

    /** The accepted row of an approver, if they acted through a stored submission. */
    async acceptedFor(approverId: string): Promise<StoredEvidence | undefined> {
      const row = await db<EvidenceRow>(TABLE).where({ approver_id: approverId, state: 'accepted' }).first();
      return row && toStored(row);
    },
  };
}
