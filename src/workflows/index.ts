// Every workflow the worker registers. Imported by the worker's bundler, never by Node directly.
export { approvalWorkflow } from '../approval/workflow/approval-workflow.ts';
export { webhookDeliveryRoundWorkflow } from '../webhooks/workflow/delivery-round-workflow.ts';
// The per-(webhook, document) queue of the previous design: no longer started, kept so running queues drain.
export { webhookDeliveryWorkflow } from '../webhooks/workflow/delivery-workflow.ts';
export { webhookOutboxSweepWorkflow } from '../webhooks/workflow/outbox-sweep-workflow.ts';
export { archiveRenewalWorkflow } from '../approval/workflow/archive-renewal-workflow.ts';
export { bulkSendWorkflow } from '../features/bulk-sends/workflow/bulk-send-workflow.ts';
