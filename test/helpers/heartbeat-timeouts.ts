import { Client, Connection } from '@temporalio/client';
import { decodeTimeoutType } from '@temporalio/common';

/** Every run of `workflowId`, those it continued as new included. */
async function runsOf(client: Client, workflowId: string) {
  const runs: { workflowId: string; runId: string }[] = [];
  for await (const w of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push({ workflowId, runId: w.runId });
  return runs;
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
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const runs = options.allRuns
      ? (await Promise.all(workflowIds.map((id) => runsOf(client, id)))).flat()
      : workflowIds.map((workflowId) => ({ workflowId, runId: undefined }));
    const histories = await Promise.all(
      runs.map((r) => client.workflow.getHandle(r.workflowId, r.runId).fetchHistory()),
    );
    const events = histories.flatMap((h) => h.events ?? []);
    return {
      runs: runs.length,
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
  } finally {
    await connection.close();
  }
}
