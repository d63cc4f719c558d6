import type { Knex } from 'knex';

/**
 * A sign-in that has passed the password and waits for the second factor. It is not a session: nothing in
 * `admin_sessions` exists until the code is accepted, so a browser stopped between the two steps is signed in
 * to nothing. Only the SHA-256 of the cookie token is kept; `next` is the page to go to afterwards.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('admin_login_challenges', (t) => {
    t.string('id_hash', 64).primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('next', 512);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['account_id']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('admin_login_challenges');
}
