import { createApprovalClient, type ApprovalClient } from '../features/approval/client.ts';
import type { ApiDeps } from '../http/deps.ts';
import { createWebhookDispatcher, type WebhookDispatcher } from '../features/webhooks/dispatch.ts';

export interface ApiServices {
  /** The one door into the approval workflows: the API, the approval page, WhatsApp and the dev inbox share it. */
  approvals: ApprovalClient;
  /** Hands committed events to webhook delivery; the worker builds its own (see src/runtime/worker-deps.ts). */
  webhooks: WebhookDispatcher;
}

/** The Temporal-backed services of one API process, built once by `createApp` and handed to every router. */
export function createApiServices(
  deps: Pick<ApiDeps, 'db' | 'config' | 'temporal' | 'logger' | 'secrets'>,
): ApiServices {
  return {
    approvals: createApprovalClient({
      client: deps.temporal.client,
      taskQueue: deps.config.temporal.taskQueue,
      autoReminders: deps.config.autoReminders,
      answerTimeoutMs: deps.config.approvalAnswerTimeoutMs,
    }),
    webhooks: createWebhookDispatcher({
      db: deps.db,
      secrets: deps.secrets,
      temporal: () => deps.temporal.client,
      taskQueue: deps.config.temporal.taskQueue,
      retryScale: deps.config.webhooks.retryScale,
      logger: deps.logger,
    }),
  };
}
