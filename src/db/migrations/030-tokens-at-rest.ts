import type { Knex } from 'knex';
import { openColumn, sealColumn, type MigrationContext } from '../migration-context.ts';
import { approverLinkContext, finalTokenContext, verificationTokenContext } from '../sealed-columns.ts';

/**
 * No bearer token in plain text: the approver's link token, the signed file's token and the verification page's
 * token are looked up by their SHA-256 (`…_sha256`, unique), and each keeps a copy sealed with the secret box
 * (`…_sealed`), because the service hands the same token out again (GET /approvers/{id}/link, GET
 * /documents/{id}/download, `verification_url`). A dump of these tables acts as nobody.
 *
 * Tokens already issued are hashed (pgcrypto's digest, the SHA-256 of the same bytes) and sealed here, so links
 * already sent keep working. Sealing needs the secret box: a database with tokens refuses to migrate without one.
 */
const TOKENS = [
  {
    table: 'approvers',
    plain: 'link_token',
    sha256: 'link_token_sha256',
    sealed: 'link_token_sealed',
    context: approverLinkContext,
  },
  {
    table: 'documents',
    plain: 'final_token',
    sha256: 'final_token_sha256',
    sealed: 'final_token_sealed',
    context: finalTokenContext,
  },
] as const;
const KEY = { column: 'id', type: 'uuid' } as const;
const VERIFICATION_KEY = { column: 'document_id', type: 'uuid' } as const;
const idOf = (r: Record<string, unknown>) => String(r.id);

export async function up(knex: Knex, context: MigrationContext): Promise<void> {
  for (const t of TOKENS) {
    await knex.schema.alterTable(t.table, (table) => {
      table.string(t.sha256, 64).unique();
      table.text(t.sealed);
    });
    await knex.raw(`UPDATE ?? SET ?? = encode(digest(??, 'sha256'), 'hex') WHERE ?? IS NOT NULL`, [
      t.table,
      t.sha256,
      t.plain,
      t.plain,
    ]);
    await sealColumn(knex, context, {
      table: t.table,
      key: KEY,
      from: t.plain,
      to: t.sealed,
      context: (r) => t.context(idOf(r)),
    });
    await knex.schema.alterTable(t.table, (table) => table.dropColumn(t.plain));
  }

  // The verification token was already looked up by its digest; its plain copy becomes a sealed one.
  await knex.schema.alterTable('document_verifications', (t) => t.text('token_sealed'));
  await sealColumn(knex, context, {
    table: 'document_verifications',
    key: VERIFICATION_KEY,
    from: 'token',
    to: 'token_sealed',
    context: (r) => verificationTokenContext(String(r.document_id)),
  });
  await knex.raw('ALTER TABLE document_verifications ALTER COLUMN token_sealed SET NOT NULL');
  await knex.schema.alterTable('document_verifications', (t) => t.dropColumn('token'));
}

/** Back to plain tokens: opens every sealed copy (the keys that sealed them must be configured). */
export async function down(knex: Knex, context: MigrationContext): Promise<void> {
  await knex.schema.alterTable('document_verifications', (t) => t.string('token', 64));
  await openColumn(knex, context, {
    table: 'document_verifications',
    key: VERIFICATION_KEY,
    from: 'token_sealed',
    to: 'token',
    context: (r) => verificationTokenContext(String(r.document_id)),
  });
  await knex.raw('ALTER TABLE document_verifications ALTER COLUMN token SET NOT NULL');
  await knex.schema.alterTable('document_verifications', (t) => t.dropColumn('token_sealed'));

  for (const t of [...TOKENS].reverse()) {
    await knex.schema.alterTable(t.table, (table) => table.string(t.plain, 64).unique());
    await openColumn(knex, context, {
      table: t.table,
      key: KEY,
      from: t.sealed,
      to: t.plain,
      context: (r) => t.context(idOf(r)),
    });
    await knex.schema.alterTable(t.table, (table) => {
      table.dropColumn(t.sha256);
      table.dropColumn(t.sealed);
    });
  }
}
