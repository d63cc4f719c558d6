import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  PHONES,
  send,
  statusOf,
  storedLinkTokens,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { startTestService } from '../helpers/test-service.ts';

/**
 * The console provider's outbox, sealed: the development inbox opens each stored message to show its link and
 * buttons, and a button pressed there goes through the inbound path, whose record is sealed too. The rows hold the
 * approver's link token nowhere in plain text.
 */

let h: FlowHarness;
beforeAll(async () => {
  const service = await startTestService({ env: { HOST: '127.0.0.1' } });
  const account = await service.createAccount({ plan: 'enterprise' });
  h = { service, account, graph: undefined as never, appSecret: '', close: () => service.close() };
});
afterAll(() => h.close());

describe('the sealed outbox', () => {
  it('the development inbox shows the link and buttons of sealed messages, and its replies act', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Inbox Approver', phone: PHONES.saudiB, action_type: 'approve_only' }],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const approverId = doc.approvers[0]!.id;
    const token = (await storedLinkTokens(h.service, { id: approverId })).get(approverId)!;
    const row = await eventually(() =>
      h.service.database
        .db('whatsapp_messages')
        .where({ approver_id: approverId, direction: 'out' })
        .first<{ id: number; payload_sealed: string } | undefined>('id', 'payload_sealed'),
    );
    expect(row.payload_sealed).toMatch(/^wqs1\./);
    expect(row.payload_sealed).not.toContain(token);

    const inbox = await (await fetch(`${h.service.api.url}/dev/inbox`)).text();
    expect(inbox).toContain(`href="/a/${token}"`);
    expect(inbox).toContain(`value="approve:${token}"`);

    const reply = await fetch(`${h.service.api.url}/dev/inbox/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `message_id=${row.id}&payload=${encodeURIComponent(`approve:${token}`)}`,
      redirect: 'manual',
    });
    expect(reply.status).toBe(302);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);
    const inbound = await h.service.database
      .db('whatsapp_messages')
      .where({ approver_id: approverId, direction: 'in' })
      .select<{ payload_sealed: string }[]>('payload_sealed');
    expect(inbound).toHaveLength(1);
    expect(inbound[0]!.payload_sealed).not.toContain(token);
    const everything = JSON.stringify(await h.service.database.db('whatsapp_messages').select('*'));
    expect(everything).not.toContain(token);
  }, 120_000);
});
