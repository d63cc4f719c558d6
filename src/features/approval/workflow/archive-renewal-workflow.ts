import { proxyActivities } from '@temporalio/workflow';

export interface ArchiveRenewalInput {
  /** Renew files whose time-stamp certificate expires within this many days (ARCHIVE_RENEWAL_MARGIN_DAYS). */
  marginDays: number;
  /** At most this many files per run (ARCHIVE_RENEWAL_BATCH_SIZE); the next run takes the rest. */
  batchSize: number;
}

export interface ArchiveRenewalResult {
  renewed: number;
  failed: number;
}

export const ARCHIVE_RENEWAL_WORKFLOW_TYPE = 'archiveRenewalWorkflow';

const activities = proxyActivities<{
  renewArchiveTimestamps(input: ArchiveRenewalInput): Promise<ArchiveRenewalResult>;
}>({
  // Each file takes a time-stamp, revocation fetches and a storage round trip; a batch may take a while.
  startToCloseTimeout: '30 minutes',
  // A run that keeps failing is left to the next scheduled run (the files stay due).
  retry: { initialInterval: '30 seconds', maximumAttempts: 3 },
});

/**
 * One run of the archive renewal schedule (started by the Temporal Schedule `archive-renewal-<task queue>`): adds
 * a fresh document time-stamp to each B-LTA file whose time-stamp certificate expires within the margin.
 */
export async function archiveRenewalWorkflow(input: ArchiveRenewalInput): Promise<ArchiveRenewalResult> {
  return activities.renewArchiveTimestamps(input);
}
