import { proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../runtime/activities.ts';
import { AccountIdKey } from '../temporal/search-attributes.ts';

const { recordPing } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

export interface PingInput {
  pingId: string;
  accountId: string;
  message: string;
}

export interface PingResult {
  pingId: string;
  workflowId: string;
  message: string;
  recordedAt: string;
}

/** The smallest full round trip: API → Temporal → activity → PostgreSQL → back to the API. */
export async function pingWorkflow(input: PingInput): Promise<PingResult> {
  upsertSearchAttributes({ [AccountIdKey.name]: [input.accountId] });
  const { workflowId } = workflowInfo();
  return await recordPing({ ...input, workflowId });
}
