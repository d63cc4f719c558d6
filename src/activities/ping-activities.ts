import { pingsStore } from '../db/stores/pings-store.ts';
import type { Db } from '../db/knex.ts';

export interface PingActivityDeps {
  db: Db;
}

export function createPingActivities({ db }: PingActivityDeps) {
  return {
    async recordPing(input: { pingId: string; accountId: string; workflowId: string; message: string }) {
      const ping = await pingsStore(db).record({
        id: input.pingId,
        accountId: input.accountId,
        workflowId: input.workflowId,
        message: input.message,
      });
      return {
        pingId: ping.id,
        workflowId: ping.workflowId,
        message: ping.message,
        recordedAt: ping.recordedAt.toISOString(),
      };
    },
  };
}
