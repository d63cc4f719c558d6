import type { Db } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import { createPingActivities } from './ping-activities.ts';

export interface ActivityDeps {
  db: Db;
  logger: Logger;
}

/** Builds every activity from the clients the worker owns; nothing here reaches for a global. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createPingActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
