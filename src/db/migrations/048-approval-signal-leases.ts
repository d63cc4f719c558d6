import type { Knex } from 'knex';

/**
 * The relay of approval signals claims rows instead of locking them across Temporal calls, and a row it cannot
 * deliver is visible.
 *
 * `leased_until`: a relay claimed the row and sends it outside any transaction; other relays skip it until then
 * (a relay that died mid-pass leaves its rows to the next one once the lease passes). `attempts` and `last_error`:
 * the sends that failed and the last failure, for operators. `dead_at` and `dead_reason`: the row will never be
 * sent (its workflow run no longer exists); it leaves the unsent backlog and is counted apart.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('approval_signals', (t) => {
    t.timestamp('leased_until', { useTz: true });
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.timestamp('dead_at', { useTz: true });
    t.string('dead_reason', 64);
  });
  await knex.raw('DROP INDEX approval_signals_unsent');
  await knex.raw(
    'CREATE INDEX approval_signals_unsent ON approval_signals (created_at) WHERE sent_at IS NULL AND dead_at IS NULL',
  );
  await knex.raw(
    'CREATE INDEX approval_signals_dead ON approval_signals (dead_at) WHERE dead_at IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX approval_signals_dead');
  await knex.raw('DROP INDEX approval_signals_unsent');
  await knex.raw(
    'CREATE INDEX approval_signals_unsent ON approval_signals (created_at) WHERE sent_at IS NULL',
  );
  await knex.schema.alterTable('approval_signals', (t) => {
    t.dropColumns('leased_until', 'attempts', 'last_error', 'dead_at', 'dead_reason');
  });
}
