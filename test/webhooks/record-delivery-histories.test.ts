import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createWebhookDispatcher, type WebhookDispatcher } from '../../src/features/webhooks/dispatch.ts';
import { webhookDeliveryRoundWorkflowId } from '../../src/features/webhooks/definitions.ts';
import { startWebhookReceiver, type ReceiverStep } from '../fakes/webhook-receiver.ts';
import { exportHistory } from '../helpers/histories.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { createWebhook, deliveriesOf, insertDocument, recordEvent, settled } from './support.ts';

/**
 * Records the delivery round workflow histories that `delivery-round-replay.test.ts` replays. Run it when the
 * workflow changes on purpose: `RECORD_HISTORIES=1 npx vitest run test/webhooks/record-delivery-histories.test.ts`.
 *
 * The histories of the previous design (one queue per webhook and document, `webhookDeliveryWorkflow`, in
 * `test/histories/webhooks/`) were recorded by the code before that change (commit cbab561) and are kept as they
 * are: no code starts that workflow any more, and they prove queues still running at an upgrade drain.
 */
const HISTORIES = path.resolve(import.meta.dirname, '../histories/webhook-rounds');
const SCALE = 0.0001;

describe.runIf(process.env.RECORD_HISTORIES === '1')('record webhook delivery round histories', () => {
  let service: TestService;
  let dispatcher: WebhookDispatcher;
  beforeAll(async () => {
    service = await startTestService({ env: { WEBHOOK_RETRY_SCALE: String(SCALE) } });
    dispatcher = createWebhookDispatcher({
      db: service.database.db,
      secrets: service.deps.secrets,
      temporal: () => service.temporal.client,
      taskQueue: service.taskQueue,
      retryScale: SCALE,
    });
  });
  afterAll(() => service.close());

  async function run(name: string, steps: ReceiverStep[], redeliver = false) {
    const account = await service.createAccount();
    const r = await startWebhookReceiver({ steps });
    const hook = await createWebhook(service, account, { url: r.url, events: ['document.sent'] });
    const { document, approvers } = await insertDocument(service.database.db, account.accountId);
    await dispatcher.dispatchEvent(
      await recordEvent(service.database.db, document, approvers, 'document.sent'),
    );
    const [delivery] = await deliveriesOf(service.database.db, hook.id);
    await settled(service.database.db, delivery!.id, 60_000);
    let workflowId = webhookDeliveryRoundWorkflowId(hook.id, { deliveryId: delivery!.id, firstAttempt: 1 });
    await service.temporal.client.workflow.getHandle(workflowId).result();
    if (redeliver) {
      await dispatcher.redeliver(account.accountId, delivery!.id);
      await settled(service.database.db, delivery!.id);
      workflowId = webhookDeliveryRoundWorkflowId(hook.id, { deliveryId: delivery!.id, firstAttempt: 2 });
      await service.temporal.client.workflow.getHandle(workflowId).result();
    }
    await r.close();
    await exportHistory(workflowId, path.join(HISTORIES, `${name}.json`));
  }

  it('retried, then delivered', async () => {
    await run('retried-then-delivered', [{ status: 500 }, { status: 429, headers: { 'retry-after': '60' } }]);
  });

  it('refused on every attempt until the schedule ends', async () => {
    await run(
      'failed',
      Array.from({ length: 8 }, () => ({ status: 503 })),
    );
  });

  it('gone: 410 disables the webhook', async () => {
    await run('gone', [{ status: 410 }]);
  });

  it('redelivered after success (a second round, a workflow of its own)', async () => {
    await run('redelivered', [], true);
  });
});
