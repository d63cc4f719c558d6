import type { Knex } from 'knex';

/**
 * Every change to a key, and to an account's plan, is announced on the channel `wathiq_api_keys` when its
 * transaction commits: the key itself, or `account:<id>`. Each API process keeps the keys it has authenticated in
 * memory (src/features/accounts/api-key-cache.ts) and drops an entry as soon as its notice arrives, so a revocation made
 * anywhere (the dashboard, the CLI, plain SQL) takes effect on every process at once. Triggers rather than calls in
 * the store: nothing that writes these tables can forget to announce it.
 */
export const CHANNEL = 'wathiq_api_keys';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION wathiq_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${CHANNEL}', OLD.key);
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION wathiq_api_key_changed()`);
  await knex.raw(`
    CREATE FUNCTION wathiq_account_plan_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('${CHANNEL}', 'account:' || OLD.id);
      ELSIF NEW.plan IS DISTINCT FROM OLD.plan THEN
        PERFORM pg_notify('${CHANNEL}', 'account:' || OLD.id);
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER accounts_plan_changed AFTER UPDATE OR DELETE ON accounts
      FOR EACH ROW EXECUTE FUNCTION wathiq_account_plan_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS accounts_plan_changed ON accounts');
  await knex.raw('DROP FUNCTION IF EXISTS wathiq_account_plan_changed()');
  await knex.raw('DROP TRIGGER IF EXISTS api_keys_changed ON api_keys');
  await knex.raw('DROP FUNCTION IF EXISTS wathiq_api_key_changed()');
}
