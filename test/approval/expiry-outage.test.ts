import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  messagesTo,
  PHONES,
  send,
  startFlowHarness,
  statusOf,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Expiry is exact. The WhatsApp Cloud API (the fake) answers 500 to everything sent to the approver; the deadline
 * timer races the notification being retried, and an approver whose notification exhausted its policy reads
 * "failed" and can be reminded once WhatsApp is back.
 */
const OUTAGE = Array.from({ length: 2000 }, () => ({ kind: 'raw' as const, status: 500, body: 'outage' }));

async function shortLived(h: FlowHarness, seconds: number) {
  const doc = await createDocument(h, {
    workflowType: 'parallel',
    approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
  });
  const expiresAt = new Date(Date.now() + seconds * 1000);
  await h.service.database.db('documents').where({ id: doc.id }).update({ expires_at: expiresAt });
  return { doc, expiresAt };
}

describe('the deadline during a WhatsApp outage, notifications still being retried', () => {
  let h: FlowHarness;
  beforeAll(async () => {
    h = await startFlowHarness(); // the default notification policy: 6 hours of retries
  });
  afterAll(() => h.close());

  it('expires the document at its deadline, not after the notification gives up', async () => {
    h.graph.scriptFor(PHONES.saudiA, ...OUTAGE);
    const { doc, expiresAt } = await shortLived(h, 4);
    expect((await send(h, doc.id)).status).toBe(200);
    await eventually(() => h.graph.requests.length > 0); // the notification is being tried
    await eventually(async () => (await statusOf(h, doc.id)).status === 'expired', 60_000);
    const row = await h.service.database
      .db('documents')
      .where({ id: doc.id })
      .first<{ completed_at: Date }>('completed_at');
    expect(row.completed_at.getTime()).toBeGreaterThanOrEqual(expiresAt.getTime());
    expect(messagesTo(h, PHONES.saudiA).filter((r) => r.wamid)).toEqual([]);
    await h.service.temporal.client.workflow.getHandle(`document-${doc.id}`).result();
    h.graph.reset();
  }, 120_000);
});

describe('a notification that exhausts its retry policy', () => {
  let h: FlowHarness;
  beforeAll(async () => {
    h = await startFlowHarness({
      env: { APPROVAL_NOTIFY_RETRY_SECONDS: '3', REMIND_COOLDOWN_MINUTES: '0' },
    });
  });
  afterAll(() => h.close());

  it('reads failed, counts as notified, is sent by remind after recovery, and the document still expires', async () => {
    h.graph.scriptFor(PHONES.saudiA, ...OUTAGE);
    const { doc } = await shortLived(h, 30);
    expect((await send(h, doc.id)).status).toBe(200);
    const approverId = doc.approvers[0]!.id;
    const failed = await eventually(async () => {
      const a = (await statusOf(h, doc.id)).approvers[0]!;
      return a.notification?.status === 'failed' && a;
    }, 60_000);
    expect(failed.status).toBe('notified');
    expect(JSON.stringify(failed.notification!.error)).toMatch(/500|outage/i);
    expect((await statusOf(h, doc.id)).status).toBe('pending');

    h.graph.reset(); // WhatsApp is back
    const res = await h.service.request(`/approvers/${approverId}/remind`, {
      method: 'POST',
      account: h.account,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { data: { whatsapp_message_id: string | null } };
    expect(body.data.whatsapp_message_id).toBeTruthy();
    expect(messagesTo(h, PHONES.saudiA)).toHaveLength(1);
    await eventually(
      async () => (await statusOf(h, doc.id)).approvers[0]!.notification?.status === 'accepted',
    );

    await eventually(async () => (await statusOf(h, doc.id)).status === 'expired', 90_000);
  }, 180_000);
});
