import type { Knex } from 'knex';

/**
 * Verified approvers. `approvers.verification` is how the approver must prove they hold their
 * WhatsApp number before acting on the page (`none` or `whatsapp_otp`), taken from the request or else from the
 * account's `default_verification`; `approvers.verified_by` and `approver_action_evidence.verified_by` record how
 * the approver that acted was verified (`whatsapp_otp`, `whatsapp_reply`, `none`), for the certificate.
 * `approver_otp_codes`: at most one code per approver, its scrypt hash and salt, expiry, wrong attempts, the
 * send counters of the resend limits, and the hash of the session proof a right code gives the page.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.string('default_verification', 16).notNullable().defaultTo('none');
  });
  await knex.schema.alterTable('approvers', (t) => {
    t.string('verification', 16).notNullable().defaultTo('none');
    t.string('verified_by', 16);
  });
  await knex.schema.alterTable('approver_action_evidence', (t) => {
    t.string('verified_by', 16);
  });
  await knex.raw(`ALTER TABLE accounts ADD CONSTRAINT accounts_default_verification_check
    CHECK (default_verification IN ('none','whatsapp_otp'))`);
  await knex.raw(`ALTER TABLE approvers ADD CONSTRAINT approvers_verification_check
    CHECK (verification IN ('none','whatsapp_otp'))`);
  await knex.schema.createTable('approver_otp_codes', (t) => {
    t.uuid('approver_id').primary().references('approvers.id').onDelete('CASCADE');
    t.string('code_hash', 128);
    t.string('salt', 64);
    t.timestamp('expires_at', { useTz: true });
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('last_sent_at', { useTz: true });
    t.timestamp('window_started_at', { useTz: true });
    t.integer('sends_in_window').notNullable().defaultTo(0);
    t.string('session_hash', 128);
    t.timestamp('session_expires_at', { useTz: true });
    t.timestamp('verified_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('approver_otp_codes');
  await knex.schema.alterTable('approver_action_evidence', (t) => t.dropColumn('verified_by'));
  await knex.schema.alterTable('approvers', (t) => {
    t.dropColumn('verification');
    t.dropColumn('verified_by');
  });
  await knex.schema.alterTable('accounts', (t) => t.dropColumn('default_verification'));
}
