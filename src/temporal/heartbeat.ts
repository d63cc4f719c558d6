import { currentActivityContext } from './activity-context.ts';

/**
 * How often a long activity tells Temporal it is alive: every 5 s, or three times within a shorter heartbeat
 * time-out, so a live attempt is never given up for a missed heartbeat.
 */
const HEARTBEAT_INTERVAL_MS = 5_000;

export function heartbeatIntervalMs(heartbeatTimeoutMs: number | undefined): number {
  return heartbeatTimeoutMs ? Math.min(HEARTBEAT_INTERVAL_MS, heartbeatTimeoutMs / 3) : HEARTBEAT_INTERVAL_MS;
}

/**
 * Runs `work` while heartbeating, so that a worker that dies mid-way (a crash, SIGKILL) is noticed within the
 * activity's heartbeat time-out and the next attempt runs on another worker, instead of after the whole
 * start-to-close time-out. Outside an activity (a direct call in a test) it only runs `work`.
 */
export async function whileHeartbeating<T>(work: () => Promise<T>): Promise<T> {
  const context = currentActivityContext();
  // A local activity has no heartbeat: its workflow task is what times out when its worker dies.
  if (!context || context.info.isLocal) return work();
  const timer = setInterval(() => context.heartbeat(), heartbeatIntervalMs(context.info.heartbeatTimeoutMs));
  try {
    context.heartbeat();
    return await work();
  } finally {
    clearInterval(timer);
  }
}
