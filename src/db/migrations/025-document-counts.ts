import type { Knex } from 'knex';

/**
 * The list's `total` without counting: `document_counts` holds each account's number of documents per status, kept
 * by statement-level triggers on `documents` in the same transaction as the change (so it is exact, and a rollback
 * takes it back). Counting the rows instead costs a scan of the account's index range: a cost that grows with the
 * account. The triggers add each statement's net change per (account, status) in key order, so two statements
 * touching the same accounts lock their counter rows in the same order.
 *
 * The list's page indexes end with `id`, the list's tie-break (newest first, then id), so the page is read in
 * index order with no sort whatever the account's size.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE document_counts (
      account_id uuid NOT NULL,
      status varchar(16) NOT NULL,
      n bigint NOT NULL,
      PRIMARY KEY (account_id, status)
    )`);
  // One function for the three triggers; a missing transition table is an empty one.
  await knex.raw(`
    CREATE FUNCTION wathiq_document_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO document_counts (account_id, status, n)
        SELECT account_id, status, count(*) FROM new_rows GROUP BY account_id, status ORDER BY account_id, status
        ON CONFLICT (account_id, status) DO UPDATE SET n = document_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO document_counts (account_id, status, n)
        SELECT account_id, status, -count(*) FROM old_rows GROUP BY account_id, status ORDER BY account_id, status
        ON CONFLICT (account_id, status) DO UPDATE SET n = document_counts.n + excluded.n;
      ELSE
        INSERT INTO document_counts (account_id, status, n)
        SELECT account_id, status, sum(n) FROM (
          SELECT account_id, status, 1 AS n FROM new_rows
          UNION ALL
          SELECT account_id, status, -1 AS n FROM old_rows) d
        GROUP BY account_id, status HAVING sum(n) <> 0 ORDER BY account_id, status
        ON CONFLICT (account_id, status) DO UPDATE SET n = document_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER documents_counted_insert AFTER INSERT ON documents REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION wathiq_document_counts_changed()`);
  await knex.raw(`
    CREATE TRIGGER documents_counted_update AFTER UPDATE ON documents
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION wathiq_document_counts_changed()`);
  await knex.raw(`
    CREATE TRIGGER documents_counted_delete AFTER DELETE ON documents REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION wathiq_document_counts_changed()`);
  // No document may change between the count below and the triggers taking over (the migration's transaction
  // holds this lock until it commits).
  await knex.raw('LOCK TABLE documents IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(`
    INSERT INTO document_counts (account_id, status, n)
    SELECT account_id, status, count(*) FROM documents GROUP BY account_id, status`);

  await knex.raw('CREATE INDEX documents_account_page ON documents (account_id, created_at, id)');
  await knex.raw(
    'CREATE INDEX documents_account_status_page ON documents (account_id, status, created_at, id)',
  );
  await knex.raw('DROP INDEX IF EXISTS documents_account_id_created_at_index');
  await knex.raw('DROP INDEX IF EXISTS documents_account_id_status_created_at_index');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX documents_account_id_created_at_index ON documents (account_id, created_at)');
  await knex.raw(
    'CREATE INDEX documents_account_id_status_created_at_index ON documents (account_id, status, created_at)',
  );
  await knex.raw('DROP INDEX IF EXISTS documents_account_page');
  await knex.raw('DROP INDEX IF EXISTS documents_account_status_page');
  await knex.raw('DROP TRIGGER IF EXISTS documents_counted_insert ON documents');
  await knex.raw('DROP TRIGGER IF EXISTS documents_counted_update ON documents');
  await knex.raw('DROP TRIGGER IF EXISTS documents_counted_delete ON documents');
  await knex.raw('DROP FUNCTION IF EXISTS wathiq_document_counts_changed()');
  await knex.raw('DROP TABLE IF EXISTS document_counts');
}
