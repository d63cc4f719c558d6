import type { Knex } from 'knex';

/**
 * What the final PDF's signature is: its PAdES level, signing time, the signing certificate's
 * subject, issuer, serial and expiry, and the time-stamp authority. Written once with `final_sha256` by the
 * finalization; null for documents that are not approved (and for those finalized before this migration).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.jsonb('signature').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.dropColumn('signature');
  });
}
