import type { Knex } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import type { Storage } from '../storage/storage.ts';
import { createApprovalActivities, type ApprovalActivityDeps } from '../approval/activities.ts';
import { createWebhookActivities, type WebhookActivityDeps } from '../webhooks/activities.ts';

export interface ActivityDeps extends ApprovalActivityDeps, WebhookActivityDeps {
  db: Knex;
  logger: Logger;
  storage: Storage;
}

/** Builds every activity from the clients the worker owns; nothing here reaches for a global. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createApprovalActivities(deps),
    ...createWebhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
