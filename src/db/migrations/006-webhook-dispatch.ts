import type { Knex } from 'knex';

/**
 * What webhook delivery records beyond the first schema:
 * - `document_events.webhooks_dispatched_at`: set once an event has been handed to delivery (an outbox marker),
 *   so an event committed by a process that died before dispatching it is found and dispatched later, and events
 *   of one document are dispatched in order. Events older than this migration count as dispatched.
 * - `webhook_deliveries.failure_reason`: why a delivery ended `failed` without its last attempt saying so (the
 *   webhook was disabled or answered 410 Gone, the schedule ran out).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('document_events', (t) => {
    t.timestamp('webhooks_dispatched_at', { useTz: true });
  });
  await knex.raw('UPDATE document_events SET webhooks_dispatched_at = created_at');
  await knex.raw(
    'CREATE INDEX document_events_undispatched ON document_events (id) WHERE webhooks_dispatched_at IS NULL',
  );
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.string('failure_reason', 255);
  });
  await knex.raw(
    `CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id) WHERE status = 'pending'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS webhook_deliveries_pending');
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('failure_reason');
  });
  await knex.raw('DROP INDEX IF EXISTS document_events_undispatched');
  await knex.schema.alterTable('document_events', (t) => {
    t.dropColumn('webhooks_dispatched_at');
  });
}
