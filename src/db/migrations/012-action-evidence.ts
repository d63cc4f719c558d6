import type { Knex } from 'knex';

/**
 * `approver_action_evidence`: what an approver's action came with (time, channel, client IP address and user agent,
 * WhatsApp message id, image key, typed name, generated seal, rejection reason), written before the approval
 * workflow is asked to take the action, so the workflow's update and its activities carry only the row's id and
 * Temporal's history holds no personal data. `state` is `submitted` until the workflow's
 * recordApproverAction copies the row onto the approver and marks it `accepted`; a refused action's row is
 * deleted. An approver has at most one accepted row. Rows go with their document or approver.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('approver_action_evidence', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('document_id').notNullable().references('documents.id').onDelete('CASCADE');
    t.uuid('approver_id').notNullable().references('approvers.id').onDelete('CASCADE');
    t.string('kind', 16).notNullable();
    t.string('state', 16).notNullable().defaultTo('submitted');
    t.timestamp('acted_at', { useTz: true }).notNullable();
    t.string('channel', 16).notNullable();
    t.string('ip', 64);
    t.text('user_agent');
    t.string('message_id', 128);
    t.string('image_key', 512);
    t.string('typed_name', 255);
    t.boolean('generated_seal').notNullable().defaultTo(false);
    t.text('reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['approver_id']);
  });
  await knex.raw(`ALTER TABLE approver_action_evidence ADD CONSTRAINT approver_action_evidence_kind_check
    CHECK (kind IN ('complete','reject'))`);
  await knex.raw(`ALTER TABLE approver_action_evidence ADD CONSTRAINT approver_action_evidence_state_check
    CHECK (state IN ('submitted','accepted'))`);
  await knex.raw(`CREATE UNIQUE INDEX approver_action_evidence_one_accepted
    ON approver_action_evidence (approver_id) WHERE state = 'accepted'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('approver_action_evidence');
}
