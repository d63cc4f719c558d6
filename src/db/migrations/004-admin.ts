import type { Knex } from 'knex';

/**
 * The dashboard's sign-in tables: sessions learn when they were last used (idle expiry beside the absolute
 * `expires_at`), and login attempts are counted per bucket (`email:<address>` or `ip:<address>`), not only per
 * email, so one address spraying many emails is slowed down too.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('admin_sessions', (t) => {
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id']);
    t.index(['expires_at']);
  });
  await knex.raw('ALTER TABLE login_attempts RENAME COLUMN email TO bucket');
  await knex.raw('ALTER TABLE login_attempts ALTER COLUMN bucket TYPE varchar(400)');
}

export async function down(knex: Knex): Promise<void> {
  await knex('login_attempts').whereNot('bucket', 'like', 'email:%').delete();
  await knex.raw(`UPDATE login_attempts SET bucket = substr(bucket, 7)`);
  await knex.raw('ALTER TABLE login_attempts ALTER COLUMN bucket TYPE varchar(320)');
  await knex.raw('ALTER TABLE login_attempts RENAME COLUMN bucket TO email');
  await knex.schema.alterTable('admin_sessions', (t) => {
    t.dropIndex(['expires_at']);
    t.dropIndex(['account_id']);
    t.dropColumn('last_seen_at');
  });
}
