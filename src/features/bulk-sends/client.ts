import type { Client } from '@temporalio/client';
import type { BulkSendSettings } from '../../config.ts';
import {
  BULK_SEND_WORKFLOW_TYPE,
  bulkSendWorkflowId,
  cancelSignal,
  type BulkSendWorkflowInput,
} from './definitions.ts';

/** The door into bulk-send workflows: the API and the dashboard start them and tell them of a cancellation. */
export function createBulkSendClient(deps: {
  client: () => Client;
  taskQueue: string;
  settings: Pick<BulkSendSettings, 'pagesPerRun' | 'heartbeatMs'>;
}) {
  return {
    /** Starts the workflow of a bulk send; called inside the transaction that creates it (see creation-lock.ts). */
    async start(bulkSendId: string): Promise<string> {
      const workflowId = bulkSendWorkflowId(bulkSendId);
      const input: BulkSendWorkflowInput = {
        bulkSendId,
        afterRow: 0,
        pagesPerRun: deps.settings.pagesPerRun,
        heartbeatMs: deps.settings.heartbeatMs,
      };
      await deps.client().workflow.start(BULK_SEND_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
      });
      return workflowId;
    },

    /** Wakes a paused run so it ends now; the cancellation itself is already committed (a lost signal only waits). */
    async cancelled(bulkSendId: string): Promise<void> {
      await deps.client().workflow.getHandle(bulkSendWorkflowId(bulkSendId)).signal(cancelSignal);
    },
  };
}

export type BulkSendClient = ReturnType<typeof createBulkSendClient>;
