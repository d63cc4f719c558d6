import type { Knex } from 'knex';

/**
 * Delegation. `documents.allow_delegation`: whether an approver may hand their step to someone
 * else from the approval page (default false).
 *
 * `approver_delegations`: a delegation as the approver asked for it (the delegate's name and phone, the reason, the
 * time, client IP address and user agent, how the approver was verified), written before the approval workflow is
 * asked to take it, so the workflow's `delegate` update and its activity carry ids only (`delegationId`, and
 * `delegateId`, the id the delegate's approver row will have): no name or phone in Temporal's history. `state` is
 * `submitted` until the workflow's recordDelegation activity creates the delegate's row and marks it `accepted`;
 * a refused delegation's row is deleted.
 *
 * On `approvers`: the approver who delegated reads status `delegated` with `delegated_to_id` (the delegate's row)
 * and `delegation_reason`, their `acted_at`, channel, IP address, user agent and `verified_by` describing the
 * delegation; the delegate's row has `delegated_from_id`, the same `order_index`, action, placement, verification
 * and notify.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.boolean('allow_delegation').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('approvers', (t) => {
    t.uuid('delegated_to_id').references('approvers.id').onDelete('SET NULL');
    t.uuid('delegated_from_id').references('approvers.id').onDelete('SET NULL');
    t.string('delegation_reason', 500);
  });
  await knex.schema.createTable('approver_delegations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('document_id').notNullable().references('documents.id').onDelete('CASCADE');
    t.uuid('from_approver_id').notNullable().references('approvers.id').onDelete('CASCADE');
    t.uuid('delegate_id').notNullable().unique();
    t.string('state', 16).notNullable().defaultTo('submitted');
    t.string('name', 255).notNullable();
    t.string('phone', 20).notNullable();
    t.string('reason', 500);
    t.timestamp('delegated_at', { useTz: true }).notNullable();
    t.string('ip', 64);
    t.text('user_agent');
    t.string('verified_by', 16);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['document_id']);
  });
  await knex.raw(`ALTER TABLE approver_delegations ADD CONSTRAINT approver_delegations_state_check
    CHECK (state IN ('submitted','accepted'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('approver_delegations');
  await knex.schema.alterTable('approvers', (t) => {
    t.dropColumn('delegation_reason');
    t.dropColumn('delegated_from_id');
    t.dropColumn('delegated_to_id');
  });
  await knex.schema.alterTable('documents', (t) => t.dropColumn('allow_delegation'));
}
