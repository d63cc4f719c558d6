import type { Knex } from 'knex';

/**
 * The dashboard's second factor. `account_totp` holds an account's TOTP secret, sealed with the secret box (the
 * context binds it to the account, so a sealed value copied onto another account's row does not open), and
 * whether it is in force: `confirmed_at` is null while an enrolment waits for its first valid code, and sign-in
 * asks for a code only once it is set. `last_step` is the RFC 6238 time step of the last code accepted: a code
 * of that step or an earlier one is refused, so an overheard code cannot be replayed inside its window.
 * `account_recovery_codes` keeps the SHA-256 of each recovery code (80 random bits, so a hash is enough), and
 * when it was used: each works once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_totp', (t) => {
    t.uuid('account_id').primary().references('accounts.id').onDelete('CASCADE');
    t.text('secret_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('confirmed_at', { useTz: true });
    t.bigInteger('last_step');
  });
  await knex.schema.createTable('account_recovery_codes', (t) => {
    t.bigIncrements('id');
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('code_hash', 64).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('used_at', { useTz: true });
    t.unique(['account_id', 'code_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('account_recovery_codes');
  await knex.schema.dropTableIfExists('account_totp');
}
