import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createWebhookDispatcher, type WebhookDispatcher } from '../../src/webhooks/dispatch.ts';
import { webhookDeliveryWorkflowId } from '../../src/webhooks/definitions.ts';
import { startWebhookReceiver, type ReceiverStep } from '../fakes/webhook-receiver.ts';
import { exportHistory } from '../helpers/histories.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { createWebhook, deliveriesOf, insertDocument, recordEvent, settled } from './support.ts';

/**
 * Records the delivery workflow histories that `delivery-replay.test.ts` replays. Run it when the workflow changes
 * on purpose: `RECORD_HISTORIES=1 npx vitest run test/webhooks/record-delivery-histories.test.ts`.
 */
const HISTORIES = path.resolve(import.meta.dirname, '../histories/webhooks');
const SCALE = 0.0001;

describe.runIf(process.env.RECORD_HISTORIES === '1')('record webhook delivery histories', () => {
  let service: TestService;
  let dispatcher: WebhookDispatcher;
  beforeAll(async () => {
    service = await startTestService({ env: { WEBHOOK_RETRY_SCALE: String(SCALE) } });
    // Idle workflows complete quickly, so each history ends.
    dispatcher = createWebhookDispatcher({
      db: service.database.db,
      temporal: () => service.temporal.client,
      taskQueue: service.taskQueue,
      retryScale: SCALE,
      idleMs: 300,
    });
  });
  afterAll(() => service.close());

  async function run(name: string, steps: ReceiverStep[], events: string[], redeliver = false) {
    const account = await service.createAccount();
    const r = await startWebhookReceiver({ steps });
    const hook = await createWebhook(service, account, { url: r.url, events: [...new Set(events)] });
    const { document, approvers } = await insertDocument(service.database.db, account.accountId);
    for (const event of events) {
      await dispatcher.dispatchEvent(await recordEvent(service.database.db, document, approvers, event));
    }
    for (const d of await deliveriesOf(service.database.db, hook.id))
      await settled(service.database.db, d.id);
    const workflowId = webhookDeliveryWorkflowId(hook.id, { documentId: document.id });
    if (redeliver) {
      const [first] = await deliveriesOf(service.database.db, hook.id);
      await service.temporal.client.workflow.getHandle(workflowId).result();
      await dispatcher.redeliver(account.accountId, first!.id);
      await settled(service.database.db, first!.id);
    }
    await service.temporal.client.workflow.getHandle(workflowId).result();
    await r.close();
    await exportHistory(workflowId, path.join(HISTORIES, `${name}.json`));
  }

  it('retried, then delivered, with a second event queued behind', async () => {
    await run(
      'retried-then-delivered',
      [{ status: 500 }, { status: 429, headers: { 'retry-after': '60' } }],
      ['document.sent', 'approver.completed'],
    );
  });

  it('gone: 410 disables the webhook', async () => {
    await run('gone', [{ status: 410 }], ['document.sent', 'approver.completed']);
  });

  it('redelivered after success (a new run of the workflow)', async () => {
    await run('redelivered', [], ['document.sent'], true);
  });
});
