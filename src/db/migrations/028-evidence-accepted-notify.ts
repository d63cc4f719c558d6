import type { Knex } from 'knex';

/**
 * An action's evidence becoming `accepted` (recordApproverAction, in the transaction that writes the action) is
 * announced on the channel `wathiq_evidence_accepted` when it commits, with the evidence id. The API process that
 * sent the action answers the approver as soon as it hears it (src/features/approval/write-notices.ts), instead of reading
 * the row every 100 ms while the workflow's own answer waits on an activity that does more after the write.
 */
export const CHANNEL = 'wathiq_evidence_accepted';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION wathiq_evidence_accepted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${CHANNEL}', NEW.id::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER evidence_accepted AFTER UPDATE OF state ON approver_action_evidence
      FOR EACH ROW WHEN (NEW.state = 'accepted' AND OLD.state IS DISTINCT FROM 'accepted')
      EXECUTE FUNCTION wathiq_evidence_accepted()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS evidence_accepted ON approver_action_evidence');
  await knex.raw('DROP FUNCTION IF EXISTS wathiq_evidence_accepted()');
}
