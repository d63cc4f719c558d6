import { Client, Connection } from '@temporalio/client';
import { decodeTimeoutType } from '@temporalio/common';

/** Every run of `workflowId`, those it continued as new included. */
async function runsOf(client: Client, workflowId: string) {
  const runs: { workflowId: string; runId: string }[] = [];
  for await (const w of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push({ workflowId, runId: w.runId });
  return runs;
}

/** The events of the workflows' histories: their latest runs, or with `allRuns` every run. */
async function eventsOf(address: string, workflowIds: readonly string[], allRuns: boolean) {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const runs = allRuns
      ? (await Promise.all(workflowIds.map((id) => runsOf(client, id)))).flat()
      : workflowIds.map((workflowId) => ({ workflowId, runId: undefined }));
    const histories = await Promise.all(
      runs.map((r) => client.workflow.getHandle(r.workflowId, r.runId).fetchHistory()),
    );
    return { runs: runs.length, events: histories.flatMap((h) => h.events ?? []) };
  } finally {
    await connection.close();
  }
}

/**
 * The activity attempts Temporal gave up because their heartbeat stopped, over the workflows' histories (their
 * latest runs, or with `allRuns` every run), and the heartbeat time-outs (seconds) they scheduled activities with.
 */
export async function heartbeatTimeouts(
  address: string,
  workflowIds: readonly string[],
  options: { allRuns?: boolean } = {},
) {
  const { runs, events } = await eventsOf(address, workflowIds, options.allRuns === true);
  return {
    runs,
    // An attempt that failed and was retried is in the history only as the next attempt's lastFailure.
    timedOut: events.filter(
      (e) =>
        decodeTimeoutType(
          e.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo?.timeoutType,
        ) === 'HEARTBEAT',
    ).length,
    scheduledWith: [
      ...new Set(
        events.flatMap((e) => {
          // int64 fields arrive as Long objects, whose decimal form Number reads.
          const seconds = Number(
            String(e.activityTaskScheduledEventAttributes?.heartbeatTimeout?.seconds ?? 0),
          );
          return seconds > 0 ? [seconds] : [];
        }),
      ),
    ],
  };
}

/**
 * Over the workflows' latest runs: the workflow tasks Temporal gave up after their start-to-close time-out (the
 * worker that had started them stopped answering, as a killed one does), and the ordinary activities they scheduled.
 */
export async function workflowTaskTimeouts(address: string, workflowIds: readonly string[]) {
  const { events } = await eventsOf(address, workflowIds, false);
  return {
    timedOut: events.filter(
      (e) => decodeTimeoutType(e.workflowTaskTimedOutEventAttributes?.timeoutType) === 'START_TO_CLOSE',
    ).length,
    activities: events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
  };
}
