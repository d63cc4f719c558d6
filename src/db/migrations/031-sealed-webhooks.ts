import type { Knex } from 'knex';
import { needsSecrets, openColumn, sealColumn, type MigrationContext } from '../migration-context.ts';
import { rewriteRows } from '../rewrite-rows.ts';
import { deliveryBodyContext, eventBearerContext, webhookSecretContext } from '../sealed-columns.ts';

/**
 * Webhooks keep no readable secret at rest:
 *
 * - `webhooks.secret_sealed`: the signing secret, sealed (the deliverer opens it at each attempt to sign).
 * - `webhook_deliveries.body_sealed`: the exact body sent on every attempt, sealed. Bodies carry document data and
 *   the signed file's permanent URL; the API never shows them.
 * - `document_events.bearer_sealed`: the URLs in an event's `data.document` that work as credentials
 *   (`download_url`, `verification_url`: of document.approved and document.download_rotated), sealed and taken out
 *   of `data`; delivery puts them back. Events without such URLs have none.
 *
 * What is stored already is sealed here; that needs the secret box.
 */
const KEY_ID = { column: 'id', type: 'uuid' } as const;
const KEY_BIGINT = { column: 'id', type: 'bigint' } as const;
/** The bearer fields of `data.document`, as an SQL array (constants of this file, never input). */
const BEARER = `ARRAY['download_url', 'verification_url']`;

export async function up(knex: Knex, context: MigrationContext): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => t.text('secret_sealed'));
  await sealColumn(knex, context, {
    table: 'webhooks',
    key: KEY_ID,
    from: 'secret',
    to: 'secret_sealed',
    context: (r) => webhookSecretContext(String(r.id)),
  });
  await knex.raw('ALTER TABLE webhooks ALTER COLUMN secret_sealed SET NOT NULL');
  await knex.schema.alterTable('webhooks', (t) => t.dropColumn('secret'));

  await knex.schema.alterTable('webhook_deliveries', (t) => t.text('body_sealed'));
  await sealColumn(knex, context, {
    table: 'webhook_deliveries',
    key: KEY_BIGINT,
    from: 'body',
    to: 'body_sealed',
    context: (r) => deliveryBodyContext(Number(r.id)),
  });
  await knex.raw('ALTER TABLE webhook_deliveries ALTER COLUMN body_sealed SET NOT NULL');
  await knex.schema.alterTable('webhook_deliveries', (t) => t.dropColumn('body'));

  await knex.schema.alterTable('document_events', (t) => t.text('bearer_sealed'));
  const withBearer = await knex('document_events')
    .whereRaw(`data->'document' \\?| ${BEARER}`)
    .select<{ id: number; dedupe_key: string; bearer: Record<string, unknown> }[]>(
      'id',
      'dedupe_key',
      knex.raw(
        `(SELECT jsonb_object_agg(k, v) FROM jsonb_each(data->'document') AS e(k, v) WHERE k = ANY(${BEARER})) AS bearer`,
      ),
    );
  if (withBearer.length > 0) {
    const secrets = needsSecrets(context, 'event URLs', withBearer.length);
    await rewriteRows(
      knex,
      'document_events',
      KEY_BIGINT,
      ['bearer_sealed'],
      withBearer.map((r) => ({
        key: r.id,
        values: [secrets.seal(JSON.stringify(r.bearer), eventBearerContext(r.dedupe_key))],
      })),
    );
    await knex.raw(
      `UPDATE document_events SET data = jsonb_set(data, '{document}', (data->'document') - ${BEARER})
        WHERE bearer_sealed IS NOT NULL`,
    );
  }
}

/** Back to plain columns: opens every sealed value (the keys that sealed them must be configured). */
export async function down(knex: Knex, context: MigrationContext): Promise<void> {
  const sealedEvents = await knex('document_events')
    .whereNotNull('bearer_sealed')
    .select<{ id: number; dedupe_key: string; bearer_sealed: string }[]>('id', 'dedupe_key', 'bearer_sealed');
  if (sealedEvents.length > 0) {
    const secrets = needsSecrets(context, 'event URLs', sealedEvents.length);
    for (const e of sealedEvents) {
      const bearer = secrets.open(e.bearer_sealed, eventBearerContext(e.dedupe_key));
      await knex.raw(
        `UPDATE document_events SET data = jsonb_set(data, '{document}', (data->'document') || ?::jsonb) WHERE id = ?`,
        [bearer, e.id],
      );
    }
  }
  await knex.schema.alterTable('document_events', (t) => t.dropColumn('bearer_sealed'));

  await knex.schema.alterTable('webhook_deliveries', (t) => t.text('body'));
  await openColumn(knex, context, {
    table: 'webhook_deliveries',
    key: KEY_BIGINT,
    from: 'body_sealed',
    to: 'body',
    context: (r) => deliveryBodyContext(Number(r.id)),
  });
  await knex.raw('ALTER TABLE webhook_deliveries ALTER COLUMN body SET NOT NULL');
  await knex.schema.alterTable('webhook_deliveries', (t) => t.dropColumn('body_sealed'));

  await knex.schema.alterTable('webhooks', (t) => t.text('secret'));
  await openColumn(knex, context, {
    table: 'webhooks',
    key: KEY_ID,
    from: 'secret_sealed',
    to: 'secret',
    context: (r) => webhookSecretContext(String(r.id)),
  });
  await knex.raw('ALTER TABLE webhooks ALTER COLUMN secret SET NOT NULL');
  await knex.schema.alterTable('webhooks', (t) => t.dropColumn('secret_sealed'));
}
