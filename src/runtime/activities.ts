import type { SecretBox } from '../auth/secret-box.ts';
import type { Knex } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import type { Storage } from '../storage/storage.ts';
import { createApprovalActivities, type ApprovalActivityDeps } from '../features/approval/activities.ts';
import type { ArchiveRenewalInput, ArchiveRenewalResult } from '../features/approval/archive-renewal.ts';
import { createWebhookActivities, type WebhookActivityDeps } from '../webhooks/activities.ts';

export interface ActivityDeps extends ApprovalActivityDeps, WebhookActivityDeps {
  db: Knex;
  logger: Logger;
  storage: Storage;
  /** Seals and opens the secrets stored for reading back. */
  secrets: SecretBox;
  /** PAdES B-LTA archive renewal (the archive renewal schedule's activity); absent: nothing is renewed. */
  archiveRenewal?: (input: ArchiveRenewalInput) => Promise<ArchiveRenewalResult>;
}

/** Builds every activity from the clients the worker owns; nothing here reaches for a global. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createApprovalActivities(deps),
    ...createWebhookActivities(deps),
    async renewArchiveTimestamps(input: ArchiveRenewalInput): Promise<ArchiveRenewalResult> {
      return deps.archiveRenewal ? deps.archiveRenewal(input) : { renewed: 0, failed: 0 };
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
