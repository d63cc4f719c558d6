// Every workflow the worker registers. Imported by the worker's bundler, never by Node directly.
export { pingWorkflow } from './ping-workflow.ts';
export { approvalWorkflow } from '../approval/workflow/approval-workflow.ts';
export { webhookDeliveryWorkflow } from './webhooks/delivery-workflow.ts';
export { webhookOutboxSweepWorkflow } from './webhooks/outbox-sweep-workflow.ts';
