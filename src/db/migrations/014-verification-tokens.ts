import type { Knex } from 'knex';

/**
 * The public verification page's token: one per document, reserved by the finalization activity
 * before the certificate is composed (the certificate prints `{PUBLIC_BASE_URL}/v/{token}` and is signed), kept
 * across retries so a retried finalization prints the same URL. The page looks the token up by its SHA-256
 * (`token_sha256`), so the index compares digests, never the token the visitor sent; the token itself is kept to
 * compose the certificate again and to answer `verification_url`. Deleted with the document.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('document_verifications', (t) => {
    t.uuid('document_id').primary().references('id').inTable('documents').onDelete('CASCADE');
    t.string('token', 64).notNullable();
    t.string('token_sha256', 64).notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('document_verifications');
}
