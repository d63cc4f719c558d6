import type { Knex } from '../../src/db/knex.ts';

/**
 * Makes PostgreSQL itself refuse one of the approval workflow's read-model writes, for good, until `remove()`: a
 * PL/pgSQL trigger raises on every update (or insert) of the row that the write makes. The workflow's activity then fails on
 * each attempt until APPROVAL_WRITE_RETRY_SECONDS runs out, and the workflow parks in `attention`.
 */
export interface WriteFault {
  /** The error the trigger raises (it reaches the workflow's `attention.error`). */
  readonly message: string;
  /** Drops the trigger: the next attempt of the write succeeds. */
  remove(): Promise<void>;
}

const FAULTS = {
  /** markDocumentSent and beginApproval: the `document.sent` event. */
  documentSent: {
    table: 'document_events',
    operation: 'INSERT',
    when: `NEW.event = 'document.sent'`,
    message: 'injected fault: the send cannot be recorded',
  },
  /** markDocumentExpired: the document moving to `expired`. */
  documentExpired: {
    table: 'documents',
    operation: 'UPDATE',
    when: `NEW.status = 'expired' AND OLD.status IS DISTINCT FROM 'expired'`,
    message: 'injected fault: the document cannot be marked expired',
  },
  /** recordApproverAction (complete): the approver moving to `completed`. */
  approverCompleted: {
    table: 'approvers',
    operation: 'UPDATE',
    when: `NEW.status = 'completed' AND OLD.status IS DISTINCT FROM 'completed'`,
    message: 'injected fault: the approver’s action cannot be recorded',
  },
} as const;

/**
 * `times`: refuse only that many writes, then let them through (a sequence counts them: its `nextval` survives the
 * refused transaction's rollback); without it, every write until `remove()`.
 */
export async function failWrites(
  db: Knex,
  fault: keyof typeof FAULTS,
  options: { times?: number } = {},
): Promise<WriteFault> {
  const { table, operation, when, message } = FAULTS[fault];
  const name = `test_write_fault_${fault.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
  const { times } = options;
  if (times !== undefined && !(Number.isInteger(times) && times > 0)) throw new Error(`times: ${times}`);
  const refuse =
    times === undefined
      ? `RAISE EXCEPTION '${message}';`
      : `IF nextval('${name}_count') <= ${times} THEN RAISE EXCEPTION '${message}'; END IF; RETURN NEW;`;
  await db.raw(`
    DROP SEQUENCE IF EXISTS ${name}_count;
    CREATE SEQUENCE ${name}_count;
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger AS $$
    BEGIN
      ${refuse}
    END $$ LANGUAGE plpgsql;
    DROP TRIGGER IF EXISTS ${name} ON ${table};
    CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} FOR EACH ROW WHEN (${when})
      EXECUTE FUNCTION ${name}();
  `);
  return {
    message,
    async remove() {
      await db.raw(`DROP TRIGGER IF EXISTS ${name} ON ${table}; DROP SEQUENCE IF EXISTS ${name}_count`);
    },
  };
}
