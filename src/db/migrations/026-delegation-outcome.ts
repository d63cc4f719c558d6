import type { Knex } from 'knex';

/**
 * The outcome of a delegation request (`approver_delegations`, migration 022) when the workflow's answer was lost
 * (a time-out, Temporal unreachable). Such a row used to stay `submitted` for good and its phone number counted as
 * "a delegate being added" for ever. Now a row is settled:
 *
 * - `accepted` — the workflow took it (recordDelegation, as before);
 * - refused — the workflow's refusal is known: the row is deleted (as before);
 * - `not_taken` — the workflow never took it: its update is unknown to Temporal (never delivered, or refused by
 *   the validator, which leaves no trace). Set by the approval page when it reconciles rows left `submitted`
 *   (src/features/approval/delegate-from-page.ts); its phone no longer blocks another delegation. Should the workflow
 *   take it after all, recordDelegation marks it `accepted`.
 *
 * `settled_at`: when the row left `submitted`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('approver_delegations', (t) => {
    t.timestamp('settled_at', { useTz: true });
  });
  await knex.raw('ALTER TABLE approver_delegations DROP CONSTRAINT approver_delegations_state_check');
  await knex.raw(`ALTER TABLE approver_delegations ADD CONSTRAINT approver_delegations_state_check
    CHECK (state IN ('submitted','accepted','not_taken'))`);
  // The reconciliation reads a document's rows still `submitted`.
  await knex.raw(`CREATE INDEX approver_delegations_submitted_idx ON approver_delegations (document_id)
    WHERE state = 'submitted'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS approver_delegations_submitted_idx');
  await knex('approver_delegations').where({ state: 'not_taken' }).delete();
  await knex.raw('ALTER TABLE approver_delegations DROP CONSTRAINT approver_delegations_state_check');
  await knex.raw(`ALTER TABLE approver_delegations ADD CONSTRAINT approver_delegations_state_check
    CHECK (state IN ('submitted','accepted'))`);
  await knex.schema.alterTable('approver_delegations', (t) => t.dropColumn('settled_at'));
}
