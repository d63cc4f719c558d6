import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { ArchiveRenewalInput } from './archive-renewal.ts';
import { ARCHIVE_RENEWAL_WORKFLOW_TYPE } from './workflow/archive-renewal-workflow.ts';

export const archiveRenewalScheduleId = (taskQueue: string): string => `archive-renewal-${taskQueue}`;

/**
 * Creates (or brings up to date) the Temporal Schedule that runs `archiveRenewalWorkflow` every `intervalHours`,
 * one run at a time (a run still going when the next is due makes it skip). Called by each worker at start-up;
 * the schedule's id names the task queue, so every worker of a deployment shares one schedule.
 */
export async function ensureArchiveRenewalSchedule(
  client: Client,
  opts: { taskQueue: string; intervalHours: number } & ArchiveRenewalInput,
): Promise<string> {
  const scheduleId = archiveRenewalScheduleId(opts.taskQueue);
  const input: ArchiveRenewalInput = { marginDays: opts.marginDays, batchSize: opts.batchSize };
  const spec = { intervals: [{ every: `${opts.intervalHours}h` as const }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: ARCHIVE_RENEWAL_WORKFLOW_TYPE,
    workflowId: `archive-renewal-run-${opts.taskQueue}`,
    taskQueue: opts.taskQueue,
    args: [input],
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action }));
  }
  return scheduleId;
}
