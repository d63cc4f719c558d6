import type { Knex } from 'knex';
import { openColumn, sealColumn, type MigrationContext } from '../migration-context.ts';
import { idempotentResponseContext, messagePayloadContext } from '../sealed-columns.ts';

/**
 * The last plain copies of handed-out secrets, sealed:
 *
 * - `whatsapp_messages.payload_sealed`: the outbox's payloads (an approval request carries the approver's link token
 *   in its buttons, a signed copy the file's permanent URL) and inbound replies (a button's `approve:<token>`).
 * - `idempotency_keys.response_sealed`: the response an Idempotency-Key replays for 24 hours, which may be a new
 *   webhook's secret or a replaced download URL.
 *
 * What is stored already is sealed here; that needs the secret box.
 */
const KEY_BIGINT = { column: 'id', type: 'bigint' } as const;
const MESSAGE_COLUMNS = ['direction', 'idempotency_key', 'wamid'] as const;
const messageContext = (r: Record<string, unknown>) =>
  messagePayloadContext({
    direction: String(r.direction),
    idempotencyKey: (r.idempotency_key as string | null) ?? null,
    wamid: (r.wamid as string | null) ?? null,
    id: Number(r.id),
  });

export async function up(knex: Knex, context: MigrationContext): Promise<void> {
  await knex.schema.alterTable('whatsapp_messages', (t) => t.text('payload_sealed'));
  await sealColumn(knex, context, {
    table: 'whatsapp_messages',
    key: KEY_BIGINT,
    from: 'payload',
    to: 'payload_sealed',
    read: MESSAGE_COLUMNS,
    context: messageContext,
    transform: (payload) => JSON.stringify(payload ?? null),
  });
  await knex.raw('ALTER TABLE whatsapp_messages ALTER COLUMN payload_sealed SET NOT NULL');
  await knex.schema.alterTable('whatsapp_messages', (t) => t.dropColumn('payload'));

  await knex.schema.alterTable('idempotency_keys', (t) => t.text('response_sealed'));
  await sealColumn(knex, context, {
    table: 'idempotency_keys',
    key: KEY_BIGINT,
    from: 'response_body',
    to: 'response_sealed',
    context: (r) => idempotentResponseContext(Number(r.id)),
    transform: (body) => JSON.stringify(body ?? null),
  });
  await knex.schema.alterTable('idempotency_keys', (t) => t.dropColumn('response_body'));
}

/** Back to plain columns: opens every sealed value (the keys that sealed them must be configured). */
export async function down(knex: Knex, context: MigrationContext): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => t.jsonb('response_body'));
  await openColumn(knex, context, {
    table: 'idempotency_keys',
    key: KEY_BIGINT,
    from: 'response_sealed',
    to: 'response_body',
    context: (r) => idempotentResponseContext(Number(r.id)),
    cast: 'jsonb',
  });
  await knex.schema.alterTable('idempotency_keys', (t) => t.dropColumn('response_sealed'));

  await knex.schema.alterTable('whatsapp_messages', (t) => t.jsonb('payload'));
  await openColumn(knex, context, {
    table: 'whatsapp_messages',
    key: KEY_BIGINT,
    from: 'payload_sealed',
    to: 'payload',
    read: MESSAGE_COLUMNS,
    context: messageContext,
    cast: 'jsonb',
  });
  await knex.raw('ALTER TABLE whatsapp_messages ALTER COLUMN payload SET NOT NULL');
  await knex.schema.alterTable('whatsapp_messages', (t) => t.dropColumn('payload_sealed'));
}
