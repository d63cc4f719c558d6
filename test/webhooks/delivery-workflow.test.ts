import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalClient } from '../../src/features/approval/client.ts';
import { takeAction } from '../../src/features/approval/take-action.ts';
import { documentEventsStore, fullEventData } from '../../src/features/events/document-events-store.ts';
import {
  openDeliveryBody,
  webhookDeliveriesStore,
} from '../../src/features/webhooks/webhook-deliveries-store.ts';
import { createWebhookDispatcher, type WebhookDispatcher } from '../../src/features/webhooks/dispatch.ts';
import { SUBSCRIBABLE_EVENTS } from '../../src/features/webhooks/events.ts';
import { isoTime } from '../../src/domain/time.ts';
import { webhookDispatchStore } from '../../src/features/webhooks/webhook-dispatch-store.ts';
import {
  deliveryRoundQuery,
  enqueueDeliverySignal,
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryRoundWorkflowId,
  webhookDeliveryWorkflowId,
  webhookOutboxSweepWorkflowId,
  type DeliveryRequest,
} from '../../src/features/webhooks/definitions.ts';
import { buildEventBody } from '../../src/features/webhooks/payload.ts';
import { createDb } from '../../src/db/knex.ts';
import { MAX_ATTEMPTS } from '../../src/features/webhooks/workflow/retry-schedule.ts';
import type { webhookDeliveryWorkflow } from '../../src/features/webhooks/workflow/delivery-workflow.ts';
import {
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../fakes/webhook-receiver.ts';
import { documentForm } from '../helpers/multipart.ts';
import { makePdf } from '../helpers/pdf.ts';
import { createTemplate, phoneFor } from '../templates/support.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';
import {
  bodyOf,
  createWebhook,
  deliveriesOf,
  eventually,
  expectVerified,
  insertDocument,
  recordEvent,
  settled,
  startGate,
} from './support.ts';

/**
 * Delivery through the real worker and Temporal: events recorded in PostgreSQL, dispatched, and delivered by the
 * delivery workflows (one per delivery) to real HTTP receivers on loopback. The retry schedule runs at 1/10 000 of its length
 * (WEBHOOK_RETRY_SCALE), so 5 s, 5 min and 30 min become 0.5, 30 and 180 ms: no test waits for real hours.
 */

const SCALE = 0.0001;
let service: TestService;
let account: TestAccount;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  service = await startTestService({
    env: { WEBHOOK_RETRY_SCALE: String(SCALE), WEBHOOK_TIMEOUT_MS: '400' },
  });
  dispatcher = createWebhookDispatcher({
    db: service.database.db,
    secrets: service.deps.secrets,
    temporal: () => service.temporal.client,
    taskQueue: service.taskQueue,
    retryScale: SCALE,
    // The outbox sweep this dispatcher starts looks for stranded events every quarter second.
    sweep: { intervalMs: 250, strandedAfterMs: 1_500 },
  });
});
afterAll(() => service.close());

const receivers: WebhookReceiver[] = [];
async function receiver(options: WebhookReceiverOptions = {}) {
  const r = await startWebhookReceiver(options);
  receivers.push(r);
  return r;
}
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** A receiver with a webhook subscribed to `events`, and a document to have events about. */
async function setup(options: WebhookReceiverOptions = {}, events = ['document.sent', 'approver.completed']) {
  // Each test its own account: an account's events go to every one of its webhooks.
  account = await service.createAccount();
  const r = await receiver(options);
  const hook = await createWebhook(service, account, { url: r.url, events });
  r.setSecret(hook.secret);
  const doc = await insertDocument(service.database.db, account.accountId);
  return { r, hook, ...doc };
}

async function emit(doc: Awaited<ReturnType<typeof setup>>, event: string) {
  const recorded = await recordEvent(service.database.db, doc.document, doc.approvers, event);
  await dispatcher.dispatchEvent(recorded);
  return recorded;
}

describe('durable delivery', () => {
  it('retries 500, 500, 500 then 200: four attempts of one delivery, the same bytes each time', async () => {
    const ctx = await setup({ steps: [{ status: 500 }, { status: 500 }, { status: 500 }] });
    await emit(ctx, 'document.sent');

    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    const { delivery: done, attempts } = await settled(service.database.db, delivery!.id);
    expect(done.status).toBe('succeeded');
    expect(attempts.map((a) => [a.attemptNumber, a.statusCode, a.errorClass])).toEqual([
      [1, 500, 'http_status'],
      [2, 500, 'http_status'],
      [3, 500, 'http_status'],
      [4, 200, null],
    ]);

    const requests = ctx.r.requests;
    expect(requests).toHaveLength(4);
    await expectVerified(requests, ctx.hook.secret);
    expect(new Set(requests.map((q) => q.headers['x-wathiq-delivery']))).toEqual(new Set([String(done.id)]));
    expect(new Set(requests.map((q) => q.rawBody.toString('base64'))).size).toBe(1);
    expect(requests[0]!.rawBody.toString('utf8')).toBe(openDeliveryBody(done, service.deps.secrets));
    const body = bodyOf(requests[0]!);
    expect(body).toMatchObject({ id: done.id, event: 'document.sent' });
    expect(body.data.document?.id).toBe(ctx.document.id);
    // The retries waited on the (scaled) schedule: 5 s, 5 min and 30 min apart.
    const gaps = attempts.slice(1).map((a, i) => a.startedAt.getTime() - attempts[i]!.startedAt.getTime());
    expect(gaps[1]).toBeGreaterThanOrEqual(300_000 * SCALE - 5);
    expect(gaps[2]).toBeGreaterThanOrEqual(1_800_000 * SCALE - 5);
  });

  it('delivers to a receiver that is down while the worker restarts', { timeout: 200_000 }, async () => {
    account = await service.createAccount();
    const r = await receiver();
    const gate = await startGate(r.port);
    const hook = await createWebhook(service, account, { url: gate.url, events: ['document.sent'] });
    r.setSecret(hook.secret);
    const doc = await insertDocument(service.database.db, account.accountId);
    const event = await recordEvent(service.database.db, doc.document, doc.approvers, 'document.sent');
    await dispatcher.dispatchEvent(event); // the receiver is down: the gate is closed

    const [delivery] = await deliveriesOf(service.database.db, hook.id);
    const store = webhookDeliveriesStore(service.database.db);
    await eventually(async () => expect((await store.listAttempts(delivery!.id)).length).toBeGreaterThan(0));
    await service.stopWorker();
    const whileDown = await store.listAttempts(delivery!.id);
    expect(whileDown.every((a) => a.errorClass === 'connection_refused' && a.statusCode === null)).toBe(true);
    expect((await store.load(delivery!.id))!.status).toBe('pending');

    await gate.open();
    await service.startWorker();
    // A task the server handed to the stopping worker's last poll reaches the new worker only after its
    // start-to-close time-out (2 minutes for an attempt): allow for it rather than fail on a slow restart.
    const { delivery: done, attempts } = await settled(service.database.db, delivery!.id, 150_000);
    await gate.close();

    expect(done.status).toBe('succeeded');
    expect(attempts.length).toBeGreaterThan(whileDown.length);
    expect(attempts.at(-1)!.statusCode).toBe(200);
    expect(r.requests).toHaveLength(1);
    await expectVerified(r.requests, hook.secret);
    expect(r.requests[0]!.headers['x-wathiq-delivery']).toBe(String(delivery!.id));
  });

  it('records a redirect as a failure and does not follow it', async () => {
    const ctx = await setup({ steps: [{ status: 302, headers: { location: '/elsewhere' } }] });
    await emit(ctx, 'document.sent');
    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    const { delivery: done, attempts } = await settled(service.database.db, delivery!.id);
    expect(done.status).toBe('succeeded');
    expect(attempts.map((a) => [a.statusCode, a.errorClass])).toEqual([
      [302, 'http_status'],
      [200, null],
    ]);
    expect(ctx.r.requests.map((q) => q.path)).toEqual(['/hooks/wathiq', '/hooks/wathiq']);
  });

  it('disables the webhook on 410 Gone until PUT enables it again', async () => {
    const ctx = await setup({ steps: [{ status: 410 }] });
    await emit(ctx, 'document.sent');
    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    const { delivery: done, attempts } = await settled(service.database.db, delivery!.id);
    expect(done.status).toBe('failed');
    expect(attempts.map((a) => a.statusCode)).toEqual([410]);

    const res = await service.request(`/webhooks/${ctx.hook.id}`, { account });
    const { data } = (await res.json()) as { data: { active: boolean; disabled_reason: string } };
    expect(data.active).toBe(false);
    expect(data.disabled_reason).toMatch(/410 Gone/);
    const listed = (await (
      await service.request(`/webhooks/${ctx.hook.id}/deliveries`, { account })
    ).json()) as { data: { failure_reason: string }[] };
    expect(listed.data[0]!.failure_reason).toMatch(/410 Gone/);

    // Disabled: the next event makes no delivery at all.
    await emit(ctx, 'approver.completed');
    expect(await deliveriesOf(service.database.db, ctx.hook.id)).toHaveLength(1);

    const put = await service.request(`/webhooks/${ctx.hook.id}`, {
      method: 'PUT',
      account,
      body: JSON.stringify({ active: true }),
    });
    expect(((await put.json()) as { data: unknown }).data).toMatchObject({
      active: true,
      disabled_reason: null,
    });
    await emit(ctx, 'approver.completed');
    const after = await deliveriesOf(service.database.db, ctx.hook.id);
    expect(after).toHaveLength(2);
    expect((await settled(service.database.db, after[1]!.id)).delivery.status).toBe('succeeded');
    expect(ctx.r.requests.map((q) => q.headers['x-wathiq-event'])).toEqual([
      'document.sent',
      'approver.completed',
    ]);
  });

  it('honours Retry-After on 429, within the schedule', async () => {
    // One hour asked for; the schedule's next step is 5 s: the retry waits the hour (scaled: 360 ms).
    const ctx = await setup({ steps: [{ status: 429, headers: { 'retry-after': '3600' } }] });
    await emit(ctx, 'document.sent');
    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    const store = webhookDeliveriesStore(service.database.db);
    const waiting = await eventually(async () => {
      const d = await store.load(delivery!.id);
      expect(d!.nextAttemptAt).not.toBeNull();
      return d!;
    });
    const [first] = await store.listAttempts(delivery!.id);
    const planned = waiting.nextAttemptAt!.getTime() - first!.startedAt.getTime();
    expect(planned).toBeGreaterThanOrEqual(3_600_000 * SCALE);
    expect(planned).toBeLessThan(3_600_000 * SCALE + 5_000);

    const { delivery: done, attempts } = await settled(service.database.db, delivery!.id);
    expect(done.status).toBe('succeeded');
    expect(done.nextAttemptAt).toBeNull();
    expect(attempts.map((a) => a.statusCode)).toEqual([429, 200]);
    const [a, b] = ctx.r.requests;
    expect(b!.receivedAt.getTime() - a!.receivedAt.getTime()).toBeGreaterThanOrEqual(3_600_000 * SCALE - 5);
  });

  it('gives up on a receiver that does not answer within the time-out, and retries', async () => {
    const ctx = await setup({ steps: [{ hang: true }] });
    await emit(ctx, 'document.sent');
    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    const { delivery: done, attempts } = await settled(service.database.db, delivery!.id);
    expect(done.status).toBe('succeeded');
    expect(attempts.map((a) => [a.statusCode, a.errorClass])).toEqual([
      [null, 'timeout'],
      [200, null],
    ]);
    expect(attempts[0]!.durationMs).toBeGreaterThanOrEqual(390);
  });
});

describe('dispatch', () => {
  it('a receiver that keeps refusing one event still gets the next ones at once, each under one delivery id', async () => {
    // Scaled to 1/100, document.sent's retries come 50 ms, 3 s, 18 s, 72 s… apart: its schedule is far from over
    // when the later events go. With deliveries queued per document they would wait behind it (for minutes here,
    // about 27 hours in production).
    const slow = createWebhookDispatcher({
      db: service.database.db,
      secrets: service.deps.secrets,
      temporal: () => service.temporal.client,
      taskQueue: service.taskQueue,
      retryScale: 0.01,
    });
    const ctx = await setup(
      {
        respond: ({ headers }) =>
          headers['x-wathiq-event'] === 'document.sent' ? { status: 500 } : undefined,
      },
      ['document.sent', 'approver.completed', 'document.approved'],
    );
    const store = webhookDeliveriesStore(service.database.db);
    await slow.dispatchEvent(
      await recordEvent(service.database.db, ctx.document, ctx.approvers, 'document.sent'),
    );
    const [sent] = await deliveriesOf(service.database.db, ctx.hook.id);
    // Refused, and retried: document.sent is in the middle of its schedule.
    await eventually(async () =>
      expect((await store.load(sent!.id))!.attemptCount).toBeGreaterThanOrEqual(2),
    );

    for (const name of ['approver.completed', 'document.approved']) {
      await slow.dispatchEvent(await recordEvent(service.database.db, ctx.document, ctx.approvers, name));
    }
    const [, completed, approved] = await deliveriesOf(service.database.db, ctx.hook.id);
    for (const later of [completed!, approved!]) {
      const { delivery, attempts } = await settled(service.database.db, later.id);
      expect(delivery.status).toBe('succeeded');
      expect(attempts.map((a) => a.statusCode)).toEqual([200]);
    }
    // …while document.sent is still being retried, its next attempt planned.
    const stillRetrying = (await store.load(sent!.id))!;
    expect(stillRetrying.status).toBe('pending');
    expect(stillRetrying.attemptCount).toBeGreaterThanOrEqual(2);
    expect(stillRetrying.attemptCount).toBeLessThan(MAX_ATTEMPTS);

    const requests = ctx.r.requests.slice();
    await expectVerified(requests, ctx.hook.secret);
    const events = requests.map((q) => bodyOf(q).event);
    expect(events.filter((e) => e === 'approver.completed')).toHaveLength(1);
    expect(events.filter((e) => e === 'document.approved')).toHaveLength(1);
    expect(events.slice(0, 2)).toEqual(['document.sent', 'document.sent']);
    // One delivery id per event, on every attempt; and the body says where each event stands.
    const idsByEvent = new Map<string, Set<string>>();
    for (const q of requests) {
      const body = bodyOf(q);
      const ids = idsByEvent.get(body.event) ?? new Set<string>();
      ids.add(String(q.headers['x-wathiq-delivery']));
      idsByEvent.set(body.event, ids);
      expect(body.sequence).toBe(
        { 'document.sent': 1, 'approver.completed': 2, 'document.approved': 3 }[body.event],
      );
    }
    expect(Object.fromEntries([...idsByEvent].map(([event, ids]) => [event, [...ids]]))).toEqual({
      'document.sent': [String(sent!.id)],
      'approver.completed': [String(completed!.id)],
      'document.approved': [String(approved!.id)],
    });
    // The refused event runs a workflow of its own, which reports its current attempt.
    const round = await service.temporal.client.workflow
      .getHandle(webhookDeliveryRoundWorkflowId(sent!.webhookId, { deliveryId: sent!.id, firstAttempt: 1 }))
      .query(deliveryRoundQuery);
    expect(round).toMatchObject({ deliveryId: sent!.id });
    // Stop its retries: a disabled webhook's pending deliveries fail.
    await service.request(`/webhooks/${ctx.hook.id}`, {
      method: 'PUT',
      account,
      body: JSON.stringify({ active: false }),
    });
  });

  it('stores an event no active webhook subscribes to as dispatched, and hands it to nobody', async () => {
    const ctx = await setup({}, ['document.sent']);
    const record = (event: string) => recordEvent(service.database.db, ctx.document, ctx.approvers, event);
    const dispatchedAt = async (id: number) =>
      (
        await service.database
          .db('document_events')
          .where({ id })
          .first<{ webhooks_dispatched_at: Date | null }>('webhooks_dispatched_at')
      )?.webhooks_dispatched_at ?? null;
    const setActive = async (active: boolean) => {
      const res = await service.request(`/webhooks/${ctx.hook.id}`, {
        method: 'PUT',
        account,
        body: JSON.stringify({ active }),
      });
      expect(res.status).toBe(200);
    };

    // Not subscribed: settled at insert, and dispatching it starts nothing.
    const unsubscribed = await record('approver.completed');
    expect(unsubscribed.awaitsDispatch).toBe(false);
    expect(await dispatchedAt(unsubscribed.id)).toBeInstanceOf(Date);
    expect(await dispatcher.dispatchEvent(unsubscribed)).toEqual({ events: 0, deliveries: 0 });
    expect(await dispatcher.dispatchStranded({ olderThanMs: 0 })).toBe(0);

    // Subscribed but the webhook is disabled: the same.
    await setActive(false);
    expect((await record('document.sent')).awaitsDispatch).toBe(false);
    expect(await deliveriesOf(service.database.db, ctx.hook.id)).toEqual([]);

    // Enabled again: the next subscribed event waits for its dispatch, and is delivered once.
    await setActive(true);
    const subscribed = await record('document.sent');
    expect(subscribed.awaitsDispatch).toBe(true);
    expect(await dispatchedAt(subscribed.id)).toBeNull();
    expect(await dispatcher.dispatchEvent(subscribed)).toEqual({ events: 1, deliveries: 1 });
    expect(await dispatchedAt(subscribed.id)).toBeInstanceOf(Date);
    const [delivery, ...others] = await deliveriesOf(service.database.db, ctx.hook.id);
    expect(others).toEqual([]);
    expect((await settled(service.database.db, delivery!.id)).delivery.status).toBe('succeeded');
    expect(ctx.r.requests.map((q) => bodyOf(q).event)).toEqual(['document.sent']);
  });

  it('never delivers twice: repeated and concurrent dispatches, and a redispatch after success', async () => {
    const ctx = await setup();
    const event = await recordEvent(service.database.db, ctx.document, ctx.approvers, 'document.sent');
    await Promise.all([dispatcher.dispatchEvent(event), dispatcher.dispatchEvent(event)]);
    await dispatcher.dispatchEventById(event.id);
    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    await settled(service.database.db, delivery!.id);
    await dispatcher.dispatchEvent(event);
    // Handed over again although already delivered (the process died before marking the event dispatched):
    // the delivery's workflow has completed, and is not run again.
    await service.database
      .db('document_events')
      .where({ id: event.id })
      .update({ webhooks_dispatched_at: null });
    await dispatcher.dispatchEvent(event);
    await emit(ctx, 'approver.completed');
    const all = await deliveriesOf(service.database.db, ctx.hook.id);
    expect(all).toHaveLength(2);
    await settled(service.database.db, all[1]!.id);
    const round = service.temporal.client.workflow.getHandle(
      webhookDeliveryRoundWorkflowId(delivery!.webhookId, { deliveryId: delivery!.id, firstAttempt: 1 }),
    );
    await round.result();
    expect(ctx.r.requests.map((q) => bodyOf(q).event)).toEqual(['document.sent', 'approver.completed']);
    expect((await webhookDeliveriesStore(service.database.db).load(delivery!.id))!.attemptCount).toBe(1);
  });

  it('never delivers twice: dispatched again while its retries are under way', async () => {
    const ctx = await setup({ steps: [{ status: 500 }, { status: 500 }] });
    const event = await emit(ctx, 'document.sent');
    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    await ctx.r.waitForRequests(1);
    await service.database
      .db('document_events')
      .where({ id: event.id })
      .update({ webhooks_dispatched_at: null });
    await Promise.all([dispatcher.dispatchEvent(event), dispatcher.dispatchStranded({ olderThanMs: 0 })]);
    const { delivery: done, attempts } = await settled(service.database.db, delivery!.id);
    expect(done.status).toBe('succeeded');
    expect(attempts.map((a) => [a.attemptNumber, a.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    expect(ctx.r.requests).toHaveLength(3);
    expect(new Set(ctx.r.requests.map((q) => q.headers['x-wathiq-delivery']))).toEqual(
      new Set([String(delivery!.id)]),
    );
  });

  it('dispatches an event its process never dispatched: before the next event of its document, or by the sweep', async () => {
    const ctx = await setup();
    // Committed, then the process died before dispatching it.
    await recordEvent(service.database.db, ctx.document, ctx.approvers, 'document.sent');
    await emit(ctx, 'approver.completed');
    const both = await deliveriesOf(service.database.db, ctx.hook.id);
    for (const d of both) await settled(service.database.db, d.id);
    // Each on its own schedule: they may arrive in either order, the body's sequence tells which came first.
    const bodies = ctx.r.requests.map(bodyOf).sort((x, y) => x.sequence! - y.sequence!);
    expect(bodies.map((b) => [b.event, b.sequence])).toEqual([
      ['document.sent', 1],
      ['approver.completed', 2],
    ]);

    // A document with no later event: the outbox sweep workflow (started by the first dispatch) finds it.
    const lone = await setup();
    await recordEvent(service.database.db, lone.document, lone.approvers, 'document.sent');
    const stranded = await eventually(async () => {
      const [d] = await deliveriesOf(service.database.db, lone.hook.id);
      expect(d).toBeDefined();
      return d!;
    });
    expect((await settled(service.database.db, stranded.id)).delivery.status).toBe('succeeded');
    expect(lone.r.requests).toHaveLength(1);
    expect(await dispatcher.dispatchStranded({ olderThanMs: 0 })).toBe(0);
    const sweep = await service.temporal.client.workflow
      .getHandle(webhookOutboxSweepWorkflowId(service.taskQueue))
      .describe();
    expect(sweep.status.name).toBe('RUNNING');
  });

  it('hands over what a transaction recorded: nothing read when no event awaits, else the newest with earlier ones', async () => {
    const ctx = await setup();
    // A pool of its own, so only this dispatcher's statements are counted.
    const counted = createDb(service.database.url, { poolMax: 2 });
    const statements: string[] = [];
    counted.on('query', (q: { sql: string }) => statements.push(q.sql));
    const own = createWebhookDispatcher({
      db: counted,
      secrets: service.deps.secrets,
      temporal: () => service.temporal.client,
      taskQueue: service.taskQueue,
      retryScale: SCALE,
    });
    try {
      // No webhook subscribes to approver.viewed: stored as dispatched, so nothing is read for it.
      const viewed = await recordEvent(service.database.db, ctx.document, ctx.approvers, 'approver.viewed');
      expect(viewed.awaitsDispatch).toBe(false);
      expect(await own.dispatchRecorded([viewed])).toEqual({ events: 0, deliveries: 0 });
      expect(statements).toEqual([]);

      // An earlier event left waiting (its process died) goes out first, with the newest one that awaits.
      await recordEvent(service.database.db, ctx.document, ctx.approvers, 'document.sent');
      const completed = await recordEvent(
        service.database.db,
        ctx.document,
        ctx.approvers,
        'approver.completed',
      );
      const later = await recordEvent(service.database.db, ctx.document, ctx.approvers, 'approver.viewed');
      expect(await own.dispatchRecorded([completed, later])).toEqual({ events: 2, deliveries: 2 });
      const both = await deliveriesOf(service.database.db, ctx.hook.id);
      for (const d of both) await settled(service.database.db, d.id);
      const bodies = ctx.r.requests.map(bodyOf).sort((x, y) => x.sequence! - y.sequence!);
      expect(bodies.map((b) => b.event)).toEqual(['document.sent', 'approver.completed']);
    } finally {
      await counted.destroy();
    }
  });

  it('never delivers an event to another account’s webhook', async () => {
    const mine = await setup();
    const other = await service.createAccount();
    const theirs = await receiver();
    const theirHook = await createWebhook(service, other, { url: theirs.url, events: ['document.sent'] });
    await emit(mine, 'document.sent');
    const [delivery] = await deliveriesOf(service.database.db, mine.hook.id);
    await settled(service.database.db, delivery!.id);
    expect(mine.r.requests).toHaveLength(1);
    expect(await deliveriesOf(service.database.db, theirHook.id)).toHaveLength(0);
    expect(theirs.requests).toHaveLength(0);
  });

  it('sends nothing to a webhook not subscribed to the event, and stops pending retries of a disabled one', async () => {
    const ctx = await setup({ fallback: { status: 500 } }, ['document.sent']);
    await emit(ctx, 'approver.completed');
    expect(await deliveriesOf(service.database.db, ctx.hook.id)).toHaveLength(0);

    await emit(ctx, 'document.sent');
    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    await ctx.r.waitForRequests(2);
    const put = await service.request(`/webhooks/${ctx.hook.id}`, {
      method: 'PUT',
      account,
      body: JSON.stringify({ active: false }),
    });
    expect(put.status).toBe(200);
    const { delivery: done } = await settled(service.database.db, delivery!.id);
    expect(done.status).toBe('failed');
    // The workflow wakes for its next attempt, finds the delivery over, sends nothing more and completes.
    const handle = service.temporal.client.workflow.getHandle(
      webhookDeliveryRoundWorkflowId(delivery!.webhookId, { deliveryId: delivery!.id, firstAttempt: 1 }),
    );
    await handle.result();
    const count = ctx.r.requests.length;
    expect((await webhookDeliveriesStore(service.database.db).load(delivery!.id))!.attemptCount).toBe(count);
  });

  it('redelivers with the same id and body on a new round', async () => {
    const ctx = await setup();
    await emit(ctx, 'document.sent');
    const [delivery] = await deliveriesOf(service.database.db, ctx.hook.id);
    await settled(service.database.db, delivery!.id);

    const res = await service.request(`/webhooks/deliveries/${delivery!.id}/redeliver`, {
      method: 'POST',
      account,
    });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { data: { id: number; status: string } }).data).toMatchObject({
      id: delivery!.id,
      status: 'pending',
    });
    const { delivery: again, attempts } = await settled(service.database.db, delivery!.id);
    expect(again.status).toBe('succeeded');
    expect(attempts.map((a) => a.attemptNumber)).toEqual([1, 2]);
    const [first, second] = ctx.r.requests;
    expect(second!.rawBody.equals(first!.rawBody)).toBe(true);
    expect(second!.headers['x-wathiq-delivery']).toBe(String(delivery!.id));
    await expectVerified(ctx.r.requests, ctx.hook.secret);
  });
});

describe('webhook.test deliveries', () => {
  it('are sent once by POST /webhooks/{id}/test, and go through the workflow when redelivered', async () => {
    const ctx = await setup({ steps: [{ status: 500 }] });
    const res = await service.request(`/webhooks/${ctx.hook.id}/test`, { method: 'POST', account });
    const { data } = (await res.json()) as {
      data: { delivery_id: number; ok: boolean; status_code: number };
    };
    expect(data).toMatchObject({ ok: false, status_code: 500 });
    const store = webhookDeliveriesStore(service.database.db);
    expect((await store.load(data.delivery_id))!.status).toBe('failed');

    const again = await service.request(`/webhooks/deliveries/${data.delivery_id}/redeliver`, {
      method: 'POST',
      account,
    });
    expect(again.status).toBe(202);
    const { delivery, attempts } = await settled(service.database.db, data.delivery_id);
    expect(delivery.status).toBe('succeeded');
    expect(attempts.map((a) => [a.attemptNumber, a.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(ctx.r.requests.map((q) => q.headers['x-wathiq-event'])).toEqual(['webhook.test', 'webhook.test']);
    expect(ctx.r.requests[1]!.rawBody.equals(ctx.r.requests[0]!.rawBody)).toBe(true);
    await expectVerified(ctx.r.requests, ctx.hook.secret);
  });
});

describe('events of the documents API and the approval workflow', () => {
  it('reach the webhook in order, signed, each body carrying its event’s data', async () => {
    account = await service.createAccount();
    const r = await receiver();
    const hook = await createWebhook(service, account, { url: r.url, events: [...SUBSCRIBABLE_EVENTS] });
    r.setSecret(hook.secret);

    const form = documentForm(
      { title: 'عقد توريد' },
      {
        approvers: [{ name: 'Ali', phone: '+966501234567', action_type: 'approve_only' }],
        file: await makePdf(1),
      },
    );
    const created = await service.request('/documents', { method: 'POST', account, body: form });
    expect(created.status).toBe(201);
    const document = ((await created.json()) as { data: { id: string; approvers: { id: string }[] } }).data;
    const approverId = document.approvers[0]!.id;
    // document.created is dispatched by the API itself, before the document is sent. (Generous time-outs: the
    // machine running the suite may be loaded; finalization signs a PDF.)
    await r.waitForRequests(1, 60_000);

    const sent = await service.request(`/documents/${document.id}/send`, { method: 'POST', account });
    expect(sent.status).toBe(200);
    const approvals = createApprovalClient({ client: service.temporal.client, taskQueue: service.taskQueue });
    await eventually(async () => {
      const a = await service.database
        .db('approvers')
        .where({ id: approverId })
        .first<{ status: string }>('status');
      expect(a.status).toBe('notified');
    });
    // As the approval page does: the action taken with its evidence, the way the run understands.
    const evidenceId = randomUUID();
    const evidence = { at: new Date().toISOString(), channel: 'page' } as const;
    await takeAction({ ...service.deps, approvals }, document.id, {
      approverId,
      kind: 'complete',
      evidenceId,
      evidence,
    });

    // Five deliveries. With this file's 400 ms receiver time-out, a loaded machine can time out an attempt the
    // receiver did take, and the retry brings the same delivery again under the same id — as receivers are told
    // to expect (docs/webhooks.md): keep the first of each id.
    const requests = await eventually(() => {
      const first = [...new Map(r.requests.map((q) => [bodyOf(q).id, q] as const).reverse()).values()];
      expect(first.length).toBeGreaterThanOrEqual(5);
      return first;
    }, 60_000);
    await expectVerified(requests, hook.secret);
    // Deliveries are independent and may arrive in any order; `sequence` puts them back in the order of events.
    const bodies = requests.map(bodyOf).sort((x, y) => x.sequence! - y.sequence!);
    expect(bodies.map((b) => b.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(bodies.map((b) => b.event)).toEqual([
      'document.created',
      'document.sent',
      'approver.notified',
      'approver.completed',
      'document.approved',
    ]);
    expect(bodies[2]!.data.approver).toMatchObject({ id: approverId, status: 'notified' });
    expect(bodies[4]!.data.document?.status).toBe('approved');
    expect(bodies[3]!.data.approver).toMatchObject({ id: approverId, status: 'completed' });
    // Whatever data an event records is what the body carries; the approved document's download_url and
    // verification_url are kept sealed beside the event and put back.
    const events = await documentEventsStore(service.database.db).listByDocument(
      account.accountId,
      document.id,
    );
    expect(events[4]!.data.document).not.toHaveProperty('download_url');
    expect(bodies[4]!.data.document).toHaveProperty('download_url');
    expect(bodies.map((b) => b.data)).toEqual(events.map((e) => fullEventData(e, service.deps.secrets)));
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(bodies.map((b) => b.created_at)).toEqual(events.map((e) => isoTime(e.createdAt)));
    expect(new Set(bodies.map((b) => b.id)).size).toBe(5);
  });
});

describe('documents made from a template', () => {
  it('are handed to delivery by the request that made them: document.created is dispatched before the 201', async () => {
    account = await service.createAccount();
    const r = await receiver();
    const hook = await createWebhook(service, account, { url: r.url, events: ['document.created'] });
    r.setSecret(hook.secret);
    const template = await createTemplate(service, account);
    const made = await service.request(`/templates/${template.id}/documents`, {
      method: 'POST',
      account,
      body: JSON.stringify({
        recipients: {
          employee: { name: 'Sara', phone: phoneFor(1, 700) },
          hr: { name: 'Omar', phone: phoneFor(2, 700) },
        },
      }),
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const { id } = ((await made.json()) as { data: { id: string } }).data;
    // Marked dispatched within the request, not left for the outbox sweep (which takes events a minute old).
    const row = await service.database
      .db('document_events')
      .where({ document_id: id, event: 'document.created' })
      .first<{ webhooks_dispatched_at: Date | null }>('webhooks_dispatched_at');
    expect(row.webhooks_dispatched_at).not.toBeNull();
    await r.waitForRequests(1, 60_000);
    expect(bodyOf(r.requests[0]!)).toMatchObject({ event: 'document.created', data: { document: { id } } });
    await expectVerified(r.requests.slice(0, 1), hook.secret);
  });
});

describe('the previous design: one queue per webhook and document', () => {
  it('a queue started before the upgrade drains on the new worker, in its order', async () => {
    const ctx = await setup({ steps: [{ status: 500 }] });
    const db = service.database.db;
    const requests: DeliveryRequest[] = [];
    // What the previous dispatcher did: the delivery rows, the events marked dispatched, a signal to the queue.
    for (const name of ['document.sent', 'approver.completed']) {
      const event = await recordEvent(db, ctx.document, ctx.approvers, name);
      const { delivery } = await webhookDeliveriesStore(db).createOnce(
        {
          webhookId: ctx.hook.id,
          accountId: account.accountId,
          eventId: event.id,
          event: event.event,
          body: (deliveryId) =>
            buildEventBody({
              deliveryId,
              event: name as 'document.sent',
              sequence: event.sequence,
              createdAt: event.createdAt,
              data: event.data,
            }),
        },
        service.deps.secrets,
      );
      await webhookDispatchStore(db).markDispatched(event.id);
      requests.push({ deliveryId: delivery.id, firstAttempt: 1 });
    }
    const workflowId = webhookDeliveryWorkflowId(ctx.hook.id, { documentId: ctx.document.id });
    for (const request of requests) {
      await service.temporal.client.workflow.signalWithStart<
        typeof webhookDeliveryWorkflow,
        [DeliveryRequest]
      >(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: service.taskQueue,
        args: [{ webhookId: ctx.hook.id, retryScale: SCALE, idleMs: 200 }],
        signal: enqueueDeliverySignal,
        signalArgs: [request],
      });
    }
    const view = await service.temporal.client.workflow
      .getHandle<typeof webhookDeliveryWorkflow>(workflowId)
      .result();
    expect(view).toEqual({ queued: [], current: null });
    for (const { deliveryId } of requests) {
      expect((await settled(db, deliveryId)).delivery.status).toBe('succeeded');
    }
    expect(ctx.r.requests.map((q) => bodyOf(q).event)).toEqual([
      'document.sent',
      'document.sent',
      'approver.completed',
    ]);
  });
});
