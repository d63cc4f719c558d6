// Every workflow the worker registers. Imported by the worker's bundler, never by Node directly.
export { documentApproval } from '../features/approval/workflow/document-approval.ts';
// The approval runs started before worker versioning, finishing on their own code; none is started any more.
export { approvalWorkflow } from '../features/approval/workflow/legacy/approval-workflow.ts';
export { webhookDeliveryRoundWorkflow } from '../features/webhooks/workflow/delivery-round-workflow.ts';
// The per-(webhook, document) queue of the previous design: no longer started, kept so running queues drain.
export { webhookDeliveryWorkflow } from '../features/webhooks/workflow/delivery-workflow.ts';
export { webhookOutboxSweepWorkflow } from '../features/webhooks/workflow/outbox-sweep-workflow.ts';
export { archiveRenewalWorkflow } from '../features/approval/workflow/archive-renewal-workflow.ts';
export { bulkSendWorkflow } from '../features/bulk-sends/workflow/bulk-send-workflow.ts';
