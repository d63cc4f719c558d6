import type { SecretBox } from '../auth/secret-box.ts';
import type { Knex } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import type { Storage } from '../storage/storage.ts';
import {
  createApprovalActivities,
  type ApprovalActivityDeps,
} from '../features/approval/activities/index.ts';
import type { ArchiveRenewalInput, ArchiveRenewalResult } from '../features/approval/archive-renewal.ts';
import type { ApprovalActivities as LegacyApprovalActivities } from '../features/approval/workflow/legacy/definitions.ts';
import { createWebhookActivities, type WebhookActivityDeps } from '../features/webhooks/activities.ts';
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

/**
 * The worker's activity registry: every feature's activities, built from the clients the worker owns (nothing here
 * reaches for a global). The approval activities serve both approval workflows: the legacy one calls them by the
 * names and with the inputs it was frozen with, which the assignment below holds to.
 */
export function createActivities(deps: ActivityDeps) {
  const approval = createApprovalActivities(deps);
  const legacy: LegacyApprovalActivities = approval;
  return {
    ...legacy,
    ...approval,
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
