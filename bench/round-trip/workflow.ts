// The same-run baseline of bench/lifecycle.ts: the smallest Temporal round trip that does work — one workflow,
// one activity. Bundled by the benchmark's own worker (task queue `bench-round-trip`), never by the app's.
import { proxyActivities } from '@temporalio/workflow';

const { roundTripActivity } = proxyActivities<{ roundTripActivity(n: number): Promise<number> }>({
  startToCloseTimeout: '1 minute',
});

export async function roundTripWorkflow(n: number): Promise<number> {
  return roundTripActivity(n);
}
