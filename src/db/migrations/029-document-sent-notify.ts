import type { Knex } from 'knex';

/**
 * A document's `document.sent` event (markDocumentSent, the workflow's first write) is announced on the channel
 * `wathiq_document_sent` when it commits, with the document id. The API process that sent the document answers as
 * soon as it hears it (src/features/approval/write-notices.ts), instead of looking the event up at growing intervals.
 */
export const CHANNEL = 'wathiq_document_sent';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION wathiq_document_sent() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${CHANNEL}', NEW.document_id::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER document_sent AFTER INSERT ON document_events
      FOR EACH ROW WHEN (NEW.event = 'document.sent')
      EXECUTE FUNCTION wathiq_document_sent()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS document_sent ON document_events');
  await knex.raw('DROP FUNCTION IF EXISTS wathiq_document_sent()');
}
