import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import {
  openDeliveryBody,
  webhookDeliveriesStore,
} from '../../src/features/webhooks/webhook-deliveries-store.ts';
import { webhooksStore } from '../../src/features/webhooks/webhooks-store.ts';
import { buildEventBody } from '../../src/features/webhooks/payload.ts';
import { generateWebhookSecret } from '../../src/features/webhooks/signature.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

let tdb: TestDatabase;
const box = createSecretBox([{ id: 'test', key: randomBytes(32) }]);
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

async function account(): Promise<string> {
  const a = await accountsStore(tdb.db).create({
    name: 'Acme',
    email: `${randomUUID()}@example.com`,
    passwordHash: 'x',
    plan: 'business',
  });
  return a.id;
}

async function documentEvent(accountId: string, event = 'document.sent'): Promise<number> {
  const [row] = await tdb
    .db('document_events')
    .insert({ account_id: accountId, event, sequence: 1, data: {}, dedupe_key: randomUUID() })
    .returning<{ id: number }[]>('id');
  return row!.id;
}

describe('webhooksStore', () => {
  it('creates, lists, gets, updates and deletes webhooks within one account, never showing the secret', async () => {
    const store = webhooksStore(tdb.db);
    const accountId = await account();
    const other = await account();
    const secret = generateWebhookSecret();
    const hook = await store.create(
      {
        accountId,
        url: 'https://hooks.example.com/a',
        events: ['document.sent', 'document.approved', 'document.sent'],
        secret,
      },
      box,
    );
    expect(hook).toMatchObject({
      accountId,
      url: 'https://hooks.example.com/a',
      events: ['document.sent', 'document.approved'],
      active: true,
      disabledReason: null,
    });
    expect(JSON.stringify(hook)).not.toContain(secret);
    expect(hook).not.toHaveProperty('secret');

    const second = await store.create(
      {
        accountId,
        url: 'https://hooks.example.com/b',
        events: ['document.created'],
        secret: generateWebhookSecret(),
      },
      box,
    );
    const page = await store.list(accountId, { page: 1, perPage: 1 });
    expect(page.total).toBe(2);
    expect(page.items.map((w) => w.id)).toEqual([second.id]);
    expect((await store.list(accountId, { page: 2, perPage: 1 })).items.map((w) => w.id)).toEqual([hook.id]);
    expect(JSON.stringify(await store.list(accountId))).not.toContain('whsec_');
    expect((await store.findById(accountId, hook.id))?.url).toBe('https://hooks.example.com/a');
    expect(JSON.stringify(await store.findById(accountId, hook.id))).not.toContain('whsec_');

    // Another account sees nothing and changes nothing.
    expect(await store.findById(other, hook.id)).toBeUndefined();
    expect((await store.list(other)).total).toBe(0);
    expect(await store.update(other, hook.id, { active: false })).toBeUndefined();
    expect(await store.rotateSecret(other, hook.id, generateWebhookSecret(), box)).toBeUndefined();
    expect(await store.delete(other, hook.id)).toBe(false);
    expect(await store.findById(accountId, 'not-a-uuid')).toBeUndefined();

    const updated = await store.update(accountId, hook.id, {
      url: 'https://hooks.example.com/new',
      events: ['document.voided'],
    });
    expect(updated).toMatchObject({
      url: 'https://hooks.example.com/new',
      events: ['document.voided'],
      active: true,
    });
    expect(updated!.updatedAt.getTime()).toBeGreaterThanOrEqual(hook.updatedAt.getTime());

    expect(await store.delete(accountId, second.id)).toBe(true);
    expect(await store.findById(accountId, second.id)).toBeUndefined();
    expect(await store.delete(accountId, second.id)).toBe(false);
  });

  it('gives the secret only through findWithSecret, and rotation replaces it at once', async () => {
    const store = webhooksStore(tdb.db);
    const accountId = await account();
    const first = generateWebhookSecret();
    const hook = await store.create(
      {
        accountId,
        url: 'https://h.example.com/',
        events: ['document.sent'],
        secret: first,
      },
      box,
    );
    expect((await store.findWithSecret(hook.id, box))?.secret).toBe(first);

    const next = generateWebhookSecret();
    const rotated = await store.rotateSecret(accountId, hook.id, next, box);
    expect(rotated?.id).toBe(hook.id);
    expect(JSON.stringify(rotated)).not.toContain('whsec_');
    expect((await store.findWithSecret(hook.id, box))?.secret).toBe(next);
    expect(await store.findWithSecret(randomUUID(), box)).toBeUndefined();
  });

  it('disables with a reason, and enabling again clears it', async () => {
    const store = webhooksStore(tdb.db);
    const accountId = await account();
    const hook = await store.create(
      {
        accountId,
        url: 'https://h.example.com/',
        events: ['document.sent'],
        secret: generateWebhookSecret(),
      },
      box,
    );
    expect(await store.disable(hook.id, 'Receiver answered 410 Gone')).toBe(true);
    expect(await store.findById(accountId, hook.id)).toMatchObject({
      active: false,
      disabledReason: 'Receiver answered 410 Gone',
    });
    expect(await store.update(accountId, hook.id, { active: true })).toMatchObject({
      active: true,
      disabledReason: null,
    });
  });

  it('finds the active subscribers of an event for one account only', async () => {
    const store = webhooksStore(tdb.db);
    const accountId = await account();
    const other = await account();
    const secret = generateWebhookSecret();
    const a = await store.create(
      {
        accountId,
        url: 'https://a.example.com/',
        events: ['document.approved', 'document.sent'],
        secret,
      },
      box,
    );
    const b = await store.create(
      {
        accountId,
        url: 'https://b.example.com/',
        events: ['document.approved'],
        secret,
      },
      box,
    );
    await store.create({ accountId, url: 'https://c.example.com/', events: ['document.sent'], secret }, box);
    const off = await store.create(
      {
        accountId,
        url: 'https://d.example.com/',
        events: ['document.approved'],
        secret,
      },
      box,
    );
    await store.disable(off.id, 'off');
    await store.create(
      {
        accountId: other,
        url: 'https://e.example.com/',
        events: ['document.approved'],
        secret,
      },
      box,
    );

    const found = await store.findSubscribers(accountId, 'document.approved');
    expect(found.map((w) => w.id)).toEqual([a.id, b.id]);
    expect(JSON.stringify(found)).not.toContain('whsec_');
    expect(await store.findSubscribers(accountId, 'document.expired')).toEqual([]);
  });
});

describe('webhookDeliveriesStore', () => {
  async function setup() {
    const accountId = await account();
    const hook = await webhooksStore(tdb.db).create(
      {
        accountId,
        url: 'https://hooks.example.com/',
        events: ['document.sent'],
        secret: generateWebhookSecret(),
      },
      box,
    );
    return { accountId, hook, store: webhookDeliveriesStore(tdb.db) };
  }
  const bodyFor = (createdAt: Date) => (deliveryId: number) =>
    buildEventBody({
      deliveryId,
      event: 'document.sent',
      sequence: 1,
      createdAt,
      data: { document: { id: 'd' } },
    });

  it('creates one delivery per (webhook, event), with its own id inside the stored body', async () => {
    const { accountId, hook, store } = await setup();
    const eventId = await documentEvent(accountId);
    const createdAt = new Date('2026-11-22T09:41:00Z');
    const first = await store.createOnce(
      {
        webhookId: hook.id,
        accountId,
        eventId,
        event: 'document.sent',
        body: bodyFor(createdAt),
      },
      box,
    );
    expect(first.created).toBe(true);
    expect(first.delivery).toMatchObject({
      webhookId: hook.id,
      accountId,
      eventId,
      event: 'document.sent',
      status: 'pending',
      attemptCount: 0,
    });
    expect(JSON.parse(openDeliveryBody(first.delivery, box))).toMatchObject({
      id: first.delivery.id,
      event: 'document.sent',
      created_at: '2026-11-22T09:41:00+00:00',
    });
    expect(typeof first.delivery.id).toBe('number');

    const again = await store.createOnce(
      {
        webhookId: hook.id,
        accountId,
        eventId,
        event: 'document.sent',
        body: bodyFor(new Date()),
      },
      box,
    );
    expect(again.created).toBe(false);
    expect(again.delivery.id).toBe(first.delivery.id);
    expect(openDeliveryBody(again.delivery, box)).toBe(openDeliveryBody(first.delivery, box));

    // Without an event (webhook.test) every call is a new delivery.
    const t1 = await store.createOnce(
      {
        webhookId: hook.id,
        accountId,
        eventId: null,
        event: 'webhook.test',
        body: bodyFor(createdAt),
      },
      box,
    );
    const t2 = await store.createOnce(
      {
        webhookId: hook.id,
        accountId,
        eventId: null,
        event: 'webhook.test',
        body: bodyFor(createdAt),
      },
      box,
    );
    expect(t1.created && t2.created).toBe(true);
    expect(t1.delivery.id).not.toBe(t2.delivery.id);

    const found = (await store.findById(accountId, first.delivery.id))!;
    expect(openDeliveryBody(found, box)).toBe(openDeliveryBody(first.delivery, box));
    // At rest the body is sealed, bound to its delivery: it names nothing the receiver gets.
    expect(found.bodySealed).toMatch(/^wqs1\./);
    expect(found.bodySealed).not.toContain('document.sent');
    expect(await store.findById(await account(), first.delivery.id)).toBeUndefined();
    expect((await store.load(first.delivery.id))?.id).toBe(first.delivery.id);
  });

  it('records each attempt once, keeps the count and last status from the attempts, and marks the outcome', async () => {
    const { accountId, hook, store } = await setup();
    const { delivery } = await store.createOnce(
      {
        webhookId: hook.id,
        accountId,
        eventId: await documentEvent(accountId),
        event: 'document.sent',
        body: bodyFor(new Date()),
      },
      box,
    );
    const next = new Date(Date.now() + 5000);
    const attempt1 = {
      deliveryId: delivery.id,
      attemptNumber: 1,
      startedAt: new Date(),
      statusCode: 500,
      durationMs: 12.4,
      errorClass: 'http_status',
      errorMessage: 'Receiver answered 500',
      nextAttemptAt: next,
    };
    expect(await store.recordAttempt(attempt1)).toBe(true);
    expect(await store.recordAttempt({ ...attempt1, statusCode: 599 })).toBe(false);
    let now = await store.load(delivery.id);
    expect(now).toMatchObject({ attemptCount: 1, lastStatusCode: 500, status: 'pending' });
    expect(now!.nextAttemptAt?.getTime()).toBe(next.getTime());

    await store.recordAttempt({
      deliveryId: delivery.id,
      attemptNumber: 2,
      startedAt: new Date(),
      durationMs: 10_000,
      errorClass: 'timeout',
      errorMessage: 'No answer within 10000 ms',
    });
    now = await store.load(delivery.id);
    expect(now).toMatchObject({ attemptCount: 2, lastStatusCode: null });

    await store.recordAttempt({
      deliveryId: delivery.id,
      attemptNumber: 3,
      startedAt: new Date(),
      statusCode: 204,
      durationMs: 30,
      nextAttemptAt: null,
    });
    await store.markSucceeded(delivery.id);
    now = await store.load(delivery.id);
    expect(now).toMatchObject({
      attemptCount: 3,
      lastStatusCode: 204,
      status: 'succeeded',
      nextAttemptAt: null,
    });
    const completedAt = now!.completedAt;
    expect(completedAt).toBeInstanceOf(Date);
    await store.markSucceeded(delivery.id);
    expect((await store.load(delivery.id))!.completedAt?.getTime()).toBe(completedAt!.getTime());

    expect(await store.listAttempts(delivery.id)).toEqual([
      {
        attemptNumber: 1,
        startedAt: attempt1.startedAt,
        statusCode: 500,
        durationMs: 12,
        errorClass: 'http_status',
        errorMessage: 'Receiver answered 500',
      },
      expect.objectContaining({ attemptNumber: 2, statusCode: null, errorClass: 'timeout' }),
      expect.objectContaining({ attemptNumber: 3, statusCode: 204, errorClass: null, errorMessage: null }),
    ]);
  });

  it('marks a delivery failed, and reopens it for a redelivery with the next attempt number', async () => {
    const { accountId, hook, store } = await setup();
    const { delivery } = await store.createOnce(
      {
        webhookId: hook.id,
        accountId,
        eventId: await documentEvent(accountId),
        event: 'document.sent',
        body: bodyFor(new Date()),
      },
      box,
    );
    for (let n = 1; n <= 8; n++) {
      await store.recordAttempt({
        deliveryId: delivery.id,
        attemptNumber: n,
        startedAt: new Date(),
        statusCode: 503,
        durationMs: 5,
      });
    }
    await store.markFailed(delivery.id);
    expect(await store.load(delivery.id)).toMatchObject({ status: 'failed', attemptCount: 8 });

    expect(await store.reopen(await account(), delivery.id)).toBeUndefined();
    const reopened = await store.reopen(accountId, delivery.id);
    expect(reopened?.nextAttemptNumber).toBe(9);
    expect(reopened?.delivery).toMatchObject({
      id: delivery.id,
      status: 'pending',
      completedAt: null,
      bodySealed: delivery.bodySealed,
    });
  });

  it('lists the deliveries of a webhook, newest first, paginated, each with its attempts', async () => {
    const { accountId, hook, store } = await setup();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { delivery } = await store.createOnce(
        {
          webhookId: hook.id,
          accountId,
          eventId: await documentEvent(accountId),
          event: 'document.sent',
          body: bodyFor(new Date()),
        },
        box,
      );
      ids.push(delivery.id);
      for (let n = 1; n <= i + 1; n++) {
        await store.recordAttempt({
          deliveryId: delivery.id,
          attemptNumber: n,
          startedAt: new Date(),
          statusCode: 500 + n,
          durationMs: n,
        });
      }
    }
    const first = await store.listByWebhook(accountId, hook.id, { page: 1, perPage: 2 });
    expect(first.total).toBe(3);
    expect(first.items.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    expect(first.items[0]!.attempts.map((a) => a.statusCode)).toEqual([501, 502, 503]);
    expect(first.items[1]!.attempts.map((a) => a.attemptNumber)).toEqual([1, 2]);
    expect(first.items[0]).not.toHaveProperty('body');
    const second = await store.listByWebhook(accountId, hook.id, { page: 2, perPage: 2 });
    expect(second.items.map((d) => d.id)).toEqual([ids[0]]);
    expect(second.items[0]!.attempts).toHaveLength(1);

    expect(await store.listByWebhook(await account(), hook.id, { page: 1, perPage: 10 })).toEqual({
      items: [],
      total: 0,
    });
    expect(await store.listByWebhook(accountId, 'nope', { page: 1, perPage: 10 })).toEqual({
      items: [],
      total: 0,
    });
  });

  it('goes with its webhook when the webhook is deleted', async () => {
    const { accountId, hook, store } = await setup();
    const { delivery } = await store.createOnce(
      {
        webhookId: hook.id,
        accountId,
        eventId: await documentEvent(accountId),
        event: 'document.sent',
        body: bodyFor(new Date()),
      },
      box,
    );
    await store.recordAttempt({
      deliveryId: delivery.id,
      attemptNumber: 1,
      startedAt: new Date(),
      statusCode: 200,
      durationMs: 1,
    });
    await webhooksStore(tdb.db).delete(accountId, hook.id);
    expect(await store.load(delivery.id)).toBeUndefined();
    expect(await store.listAttempts(delivery.id)).toEqual([]);
  });
});
