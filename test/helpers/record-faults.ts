import type { Knex } from '../../src/db/knex.ts';

/**
 * Makes PostgreSQL itself refuse to record a sent WhatsApp message: a trigger on `whatsapp_messages` raises when
 * an outbound row is given its message id (wamid from NULL to a value), for the next `n` such writes. The calls
 * are counted with a sequence, since a sequence's increments survive the failed statement's rollback.
 */
export interface RecordFaults {
  /** The next `n` attempts to record a message id fail. */
  failNext(n: number): Promise<void>;
  /** How many times a message id was written since the last failNext (failed and successful). */
  calls(): Promise<number>;
}

export async function installRecordFaults(db: Knex): Promise<RecordFaults> {
  await db.raw(`
    CREATE TABLE IF NOT EXISTS test_record_faults (fail_until bigint NOT NULL);
    INSERT INTO test_record_faults SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM test_record_faults);
    CREATE SEQUENCE IF NOT EXISTS test_record_fault_calls;
    CREATE OR REPLACE FUNCTION test_record_fault() RETURNS trigger AS $$
    BEGIN
      IF nextval('test_record_fault_calls') <= (SELECT fail_until FROM test_record_faults) THEN
        RAISE EXCEPTION 'injected fault: recording WhatsApp message id % failed', NEW.wamid;
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql;
    DROP TRIGGER IF EXISTS test_record_fault ON whatsapp_messages;
    CREATE TRIGGER test_record_fault BEFORE UPDATE ON whatsapp_messages FOR EACH ROW
      WHEN (NEW.direction = 'out' AND OLD.wamid IS NULL AND NEW.wamid IS NOT NULL)
      EXECUTE FUNCTION test_record_fault();
  `);
  return {
    async failNext(n) {
      await db.raw(`SELECT setval('test_record_fault_calls', 1, false)`);
      await db.raw('UPDATE test_record_faults SET fail_until = ?', [n]);
    },
    async calls() {
      const r = await db.raw<{ rows: { last_value: string; is_called: boolean }[] }>(
        'SELECT last_value, is_called FROM test_record_fault_calls',
      );
      const row = r.rows[0]!;
      return row.is_called ? Number(row.last_value) : Number(row.last_value) - 1;
    },
  };
}
