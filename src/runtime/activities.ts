import type { SecretBox } from '../auth/secret-box.ts';
import type { Knex } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import type { Storage } from '../storage/storage.ts';
import { createApprovalActivities, type ApprovalActivityDeps } from '../approval/activities.ts';
import type { ArchiveRenewalInput, ArchiveRenewalResult } from '../approval/archive-renewal.ts';
import { createWebhookActivities, type WebhookActivityDeps } from '../webhooks/activities.ts';
import { createBulkSendActivities, type BulkSendActivityDeps } from '../features/bulk-sends/activities.ts';

export interface ActivityDeps extends ApprovalActivityDeps, WebhookActivityDeps {
  db: Knex;
  logger: Logger;
  storage: Storage;
  /** Seals and opens the secrets stored for reading back. */
  secrets: SecretBox;
  /** PAdES B-LTA archive renewal (the archive renewal schedule's activity); absent: nothing is renewed. */
  archiveRenewal?: (input: ArchiveRenewalInput) => Promise<ArchiveRenewalResult>;
  /** What the bulk-send activities read of the configuration (limits, the sending number, the task queue). */
  config?: BulkSendActivityDeps['config'];
}

/** Builds every activity from the clients the worker owns; nothing here reaches for a global. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createApprovalActivities(deps),
    ...createWebhookActivities(deps),
    ...(deps.config &&
      createBulkSendActivities({
        db: deps.db,
        logger: deps.logger,
        config: deps.config,
        webhookDispatcher: deps.webhooks.dispatcher,
        secrets: deps.secrets,
      })),
    async renewArchiveTimestamps(input: ArchiveRenewalInput): Promise<ArchiveRenewalResult> {
      return deps.archiveRenewal ? deps.archiveRenewal(input) : { renewed: 0, failed: 0 };
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
