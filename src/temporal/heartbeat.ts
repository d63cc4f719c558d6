import { Context } from '@temporalio/activity';

/** How often a long activity tells Temporal it is alive; well inside the workflow's heartbeat time-out. */
const HEARTBEAT_INTERVAL_MS = 5_000;

/**
 * Runs `work` while heartbeating, so that a worker that dies mid-way (a crash, SIGKILL) is noticed within the
 * activity's heartbeat time-out and the next attempt runs on another worker, instead of after the whole
 * start-to-close time-out. Outside an activity (a direct call in a test) it only runs `work`.
 */
export async function whileHeartbeating<T>(work: () => Promise<T>): Promise<T> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    return work();
  }
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_INTERVAL_MS);
  try {
    context.heartbeat();
    return await work();
  } finally {
    clearInterval(timer);
  }
}
