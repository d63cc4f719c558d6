import type { Knex } from 'knex';

/**
 * `document_events.sequence`: the order of a document's events, 1, 2, 3… with no gaps, carried in every webhook
 * payload so a receiver can order deliveries that arrive out of order (each delivery runs its own retry schedule).
 * New events take the next number at insert, under the document's row lock (`documentEventsStore.record`).
 * Existing events are numbered per document by (created_at, id). Events whose document was since deleted
 * (`document_id` NULL) keep a number taken among themselves: it orders nothing, but the column stays NOT NULL.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('document_events', (t) => {
    t.integer('sequence');
  });
  await knex.raw(`
    UPDATE document_events e SET sequence = n.seq
      FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY document_id ORDER BY created_at, id) AS seq
              FROM document_events) n
     WHERE e.id = n.id`);
  await knex.raw('ALTER TABLE document_events ALTER COLUMN sequence SET NOT NULL');
  // Also the index `MAX(sequence)` of one document reads at insert.
  await knex.raw(
    'CREATE UNIQUE INDEX document_events_document_sequence ON document_events (document_id, sequence)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS document_events_document_sequence');
  await knex.schema.alterTable('document_events', (t) => {
    t.dropColumn('sequence');
  });
}
