import type { Db } from '../knex.ts';

export interface Ping {
  id: string;
  accountId: string;
  workflowId: string;
  message: string;
  recordedAt: Date;
}

interface PingRow {
  id: string;
  account_id: string;
  workflow_id: string;
  message: string;
  recorded_at: Date;
}

const toPing = (r: PingRow): Ping => ({
  id: r.id,
  accountId: r.account_id,
  workflowId: r.workflow_id,
  message: r.message,
  recordedAt: r.recorded_at,
});

export function pingsStore(db: Db) {
  return {
    /** Idempotent on workflow id: a retried activity returns the row the first attempt wrote. */
    async record(input: {
      id: string;
      accountId: string;
      workflowId: string;
      message: string;
    }): Promise<Ping> {
      await db('pings')
        .insert({
          id: input.id,
          account_id: input.accountId,
          workflow_id: input.workflowId,
          message: input.message,
        })
        .onConflict('workflow_id')
        .ignore();
      const row = await db<PingRow>('pings').where({ workflow_id: input.workflowId }).first();
      return toPing(row!);
    },

    async findById(accountId: string, id: string): Promise<Ping | undefined> {
      const row = await db<PingRow>('pings').where({ id, account_id: accountId }).first();
      return row && toPing(row);
    },
  };
}
