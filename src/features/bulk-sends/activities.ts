import type { SecretBox } from '../../auth/secret-box.ts';
import { Context } from '@temporalio/activity';
import { createApprovalClient } from '../approval/client.ts';
import type { Config } from '../../config.ts';
import type { Knex } from '../../db/knex.ts';
import type { Logger } from '../../logger.ts';
import type { WebhookDispatcher } from '../webhooks/dispatch.ts';
import { recordBulkSendEvent } from './bulk-send-events.ts';
import { bulkSendStore, OPEN_BULK_STATUSES } from './bulk-send-store.ts';
import type { BulkSendActivities } from './definitions.ts';
import { runPage } from './run-page.ts';
import { lockCreation } from './creation-lock.ts';
import { whileHeartbeating } from '../../temporal/heartbeat.ts';

export interface BulkSendActivityDeps {
  db: Knex;
  logger: Logger;
  config: Pick<Config, 'bulkSends' | 'whatsapp' | 'temporal' | 'autoReminders' | 'approvalAnswerTimeoutMs'>;
  /** Hands committed events to webhook delivery (the worker's dispatcher). */
  webhookDispatcher?: WebhookDispatcher;
  /** Seals the approvers' link tokens a row's send issues. */
  secrets: SecretBox;
}

/** The sending number WhatsApp's limits belong to. */
export const senderOf = (config: Pick<Config, 'whatsapp'>) => config.whatsapp.phoneNumberId ?? 'console';

/** The bulk-send workflow's activities, built from the worker's clients. Each is idempotent. */
export function createBulkSendActivities(deps: BulkSendActivityDeps): BulkSendActivities {
  const { db, config } = deps;
  const approvals = () =>
    createApprovalClient({
      client: Context.current().client,
      taskQueue: config.temporal.taskQueue,
      autoReminders: config.autoReminders,
      answerTimeoutMs: config.approvalAnswerTimeoutMs,
    });
  return {
    async openBulkSend({ bulkSendId }) {
      return db.transaction(async (trx) => {
        await lockCreation(trx, bulkSendId);
        return (await bulkSendStore(trx).findUnscoped(bulkSendId)) !== undefined;
      });
    },

    // Heartbeats on a timer as well as per row: one row may take longer than a short heartbeat time-out (a slow
    // Graph API answer, a document made under load) without its attempt being given up.
    runBulkSendPage(input) {
      return whileHeartbeating(() =>
        runPage(
          {
            db,
            logger: deps.logger,
            ...(deps.webhookDispatcher && { webhooks: deps.webhookDispatcher }),
            approvals,
            secrets: deps.secrets,
            settings: config.bulkSends,
            sender: senderOf(config),
            heartbeat: (details) => Context.current().heartbeat(details),
          },
          input,
        ),
      );
    },

    async finishBulkSend({ bulkSendId }) {
      const event = await db.transaction(async (trx) => {
        const done = await bulkSendStore(trx).transition(bulkSendId, OPEN_BULK_STATUSES, 'completed', {
          completedAt: new Date(),
          resumesAt: null,
        });
        return done && recordBulkSendEvent(trx, done, 'bulk_send.completed');
      });
      if (event)
        await deps.webhookDispatcher
          ?.dispatchEvent(event)
          .catch((err: unknown) =>
            deps.logger.warn({ err, bulkSendId }, 'bulk_send.completed not dispatched yet'),
          );
    },
  };
}
