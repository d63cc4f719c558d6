import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * The bulk-send workflow's contract, shared by the workflow, its activities and the client. One workflow per bulk
 * send, `bulk-send-<uuid>`: it works through the rows page by page (each page one activity that makes and sends
 * the page's documents, paced against WhatsApp's limits), pauses on a durable timer while the messaging tier's
 * share is spent, and continues as new every few pages so its history stays bounded however many rows there are.
 * Histories carry ids, row numbers and counts only: the rows' people stay in PostgreSQL.
 */
export const BULK_SEND_WORKFLOW_TYPE = 'bulkSendWorkflow';

export const bulkSendWorkflowId = (bulkSendId: string) => `bulk-send-${bulkSendId}`;

export interface BulkSendWorkflowInput {
  bulkSendId: string;
  /** Rows up to this number are done (0 at the start; carried over a continue-as-new). */
  afterRow: number;
  /** Pages one run works through before it continues as new (BULK_SEND_PAGES_PER_RUN). */
  pagesPerRun: number;
  /**
   * A page's heartbeat time-out (BULK_SEND_HEARTBEAT_SECONDS). Absent from runs started before it could be set,
   * which keep 30 s.
   */
  heartbeatMs?: number;
  /** Set on a run that continued an earlier one: the bulk send was opened already. */
  continued?: boolean;
}

export interface PageResult {
  /** Every row up to this number is done with (sent, failed or cancelled). */
  afterRow: number;
  /** No row is left to make or send. */
  done: boolean;
  /** The bulk send was cancelled: nothing more is sent. */
  cancelled: boolean;
  /** Set when the messaging tier's share is spent: the bulk send reads `paused_for_quota` until then. */
  pausedUntil?: string;
}

export interface BulkSendActivities {
  /**
   * Waits for the transaction that created the bulk send (and started this workflow) to end: false when it never
   * committed, and the run has nothing to do.
   */
  openBulkSend(input: { bulkSendId: string }): Promise<boolean>;
  /** Makes and sends the next page of rows after `afterRow`, as far as WhatsApp's shares allow. */
  runBulkSendPage(input: { bulkSendId: string; afterRow: number }): Promise<PageResult>;
  /** Every row is done: the bulk send is `completed` and `bulk_send.completed` recorded (unless cancelled). */
  finishBulkSend(input: { bulkSendId: string }): Promise<void>;
}

/** Sent by the API after it recorded a cancellation, so a paused run ends at once instead of at its timer. */
export const cancelSignal = defineSignal('cancel');

export interface BulkSendProgress {
  afterRow: number;
  pages: number;
  pausedUntil: string | null;
}

export const progressQuery = defineQuery<BulkSendProgress>('progress');
