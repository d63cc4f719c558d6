import type { Knex } from '../../src/db/knex.ts';

/**
 * Makes PostgreSQL itself refuse one of the approval workflow's read-model writes, for good, until `remove()`: a
 * PL/pgSQL trigger raises on every update of the row that the write makes. The workflow's activity then fails on
 * each attempt until APPROVAL_WRITE_RETRY_SECONDS runs out, and the workflow parks in `attention`.
 */
export interface WriteFault {
  /** The error the trigger raises (it reaches the workflow's `attention.error`). */
  readonly message: string;
  /** Drops the trigger: the next attempt of the write succeeds. */
  remove(): Promise<void>;
}

const FAULTS = {
  /** markDocumentExpired: the document moving to `expired`. */
  documentExpired: {
    table: 'documents',
    when: `NEW.status = 'expired' AND OLD.status IS DISTINCT FROM 'expired'`,
    message: 'injected fault: the document cannot be marked expired',
  },
  /** recordApproverAction (complete): the approver moving to `completed`. */
  approverCompleted: {
    table: 'approvers',
    when: `NEW.status = 'completed' AND OLD.status IS DISTINCT FROM 'completed'`,
    message: 'injected fault: the approver’s action cannot be recorded',
  },
} as const;

export async function failWrites(db: Knex, fault: keyof typeof FAULTS): Promise<WriteFault> {
  const { table, when, message } = FAULTS[fault];
  const name = `test_write_fault_${fault.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
  await db.raw(`
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger AS $$
    BEGIN
      RAISE EXCEPTION '${message}';
    END $$ LANGUAGE plpgsql;
    DROP TRIGGER IF EXISTS ${name} ON ${table};
    CREATE TRIGGER ${name} BEFORE UPDATE ON ${table} FOR EACH ROW WHEN (${when})
      EXECUTE FUNCTION ${name}();
  `);
  return {
    message,
    async remove() {
      await db.raw(`DROP TRIGGER IF EXISTS ${name} ON ${table}`);
    },
  };
}
