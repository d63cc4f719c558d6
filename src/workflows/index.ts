// Every workflow the worker registers. Imported by the worker's bundler, never by Node directly.
export { approvalWorkflow } from '../approval/workflow/approval-workflow.ts';
export { webhookDeliveryWorkflow } from '../webhooks/workflow/delivery-workflow.ts';
export { webhookOutboxSweepWorkflow } from '../webhooks/workflow/outbox-sweep-workflow.ts';
