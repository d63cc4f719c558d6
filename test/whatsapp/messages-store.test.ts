import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import {
  openPayload,
  whatsAppMessagesStore,
  type WhatsAppMessagesStore,
} from '../../src/db/stores/whatsapp-messages-store.ts';
import { createCloudProvider } from '../../src/whatsapp/cloud-provider.ts';
import { createConsoleProvider, type ConsoleMessage } from '../../src/whatsapp/console-provider.ts';
import { sendNotice } from '../../src/whatsapp/send-notice.ts';
import type { ApprovalNotice, WhatsAppProvider } from '../../src/whatsapp/types.ts';
import { newWamid, startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { notice, seedDocument, templates } from '../helpers/whatsapp-fixtures.ts';

let database: TestDatabase;
const box = createSecretBox([{ id: 'test', key: randomBytes(32) }]);
let messages: WhatsAppMessagesStore;
let fake: FakeGraphApi;
let cloud: WhatsAppProvider;
let seed: Awaited<ReturnType<typeof seedDocument>>;

beforeAll(async () => {
  database = await createTestDatabase();
  messages = whatsAppMessagesStore(database.db);
  fake = await startFakeGraphApi();
  cloud = createCloudProvider({
    apiUrl: fake.apiUrl,
    phoneNumberId: fake.phoneNumberId,
    accessToken: fake.accessToken,
    timeoutMs: 2_000,
    templates,
  });
});
afterAll(async () => {
  await fake.close();
  await database.drop();
});
beforeEach(async () => {
  fake.reset();
  seed = await seedDocument(database.db);
});

function noticeFor(approver = 0, overrides: Partial<ApprovalNotice> = {}): ApprovalNotice {
  const a = seed.approvers[approver]!;
  return notice({
    accountId: seed.accountId,
    documentId: seed.documentId,
    approverId: a.id,
    phone: a.phone,
    ...overrides,
  });
}

describe('sendNotice with the cloud provider', () => {
  it('sends once per idempotency key; a retried send returns the earlier wamid', async () => {
    const n = noticeFor();
    const first = await sendNotice({ provider: cloud, messages, templates, secrets: box }, n);
    const again = await sendNotice({ provider: cloud, messages, templates, secrets: box }, n);
    expect(fake.requests).toHaveLength(1);
    expect(first).toEqual({ wamid: fake.requests[0]!.wamid, deduplicated: false });
    expect(again).toEqual({ wamid: first.wamid, deduplicated: true });

    const row = await messages.findByIdempotencyKey(n.idempotencyKey);
    expect(row).toMatchObject({
      wamid: first.wamid,
      direction: 'out',
      approverId: n.approverId,
      documentId: n.documentId,
      phone: n.phone,
      kind: 'approval_request',
      status: 'accepted',
      statusError: null,
    });
    expect(openPayload(row!, box)).toMatchObject({ provider: 'cloud', request: fake.requests[0]!.body });
    // At rest the payload is sealed: the request's buttons carry the link token.
    expect(row!.payloadSealed).toMatch(/^wqs1\./);
    expect(row!.payloadSealed).not.toContain(n.linkToken);
  });

  it('500 then 200: the failure is recorded as pending, the retry sends and records the id', async () => {
    const n = noticeFor();
    fake.scriptFor(n.phone, { kind: 'raw', status: 500 });
    await expect(sendNotice({ provider: cloud, messages, templates, secrets: box }, n)).rejects.toMatchObject(
      {
        retryable: true,
      },
    );
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      wamid: null,
      status: 'pending',
      statusError: { retryable: true, http_status: 500 },
    });

    const { wamid } = await sendNotice({ provider: cloud, messages, templates, secrets: box }, n);
    expect(fake.requests).toHaveLength(2);
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      wamid,
      status: 'accepted',
      statusError: null,
    });
  });

  it('400 131026: not retryable, recorded as failed with the Graph code', async () => {
    const n = noticeFor();
    fake.scriptFor(n.phone, {
      kind: 'graph_error',
      status: 400,
      code: 131026,
      message: 'Message undeliverable',
    });
    await expect(sendNotice({ provider: cloud, messages, templates, secrets: box }, n)).rejects.toMatchObject(
      {
        retryable: false,
        code: 131026,
      },
    );
    const row = await messages.findByIdempotencyKey(n.idempotencyKey);
    expect(row).toMatchObject({
      wamid: null,
      status: 'failed',
      statusError: { code: 131026, retryable: false },
    });
    expect((await messages.latestStatusForApprover(n.approverId!))?.status).toBe('failed');
  });
});

describe('sendNotice with the console provider', () => {
  it('logs the message, gives it a local wamid and puts it in the outbox with its buttons', async () => {
    const logged: unknown[] = [];
    const recorded: ConsoleMessage[] = [];
    const provider = createConsoleProvider({
      logger: { info: (obj: unknown) => logged.push(obj) } as never,
      templates,
      publicBaseUrl: 'http://localhost:3000',
      record: (m) => {
        recorded.push(m);
      },
    });
    const n = noticeFor(1, { actionType: 'approve_only', language: 'en' });
    const { wamid } = await sendNotice({ provider, messages, templates, secrets: box }, n);
    expect(wamid).toMatch(/^wamid\.console\.[A-Za-z0-9_-]{22}$/);
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged[0])).toContain(`http://localhost:3000/a/${n.linkToken}`);
    expect(recorded[0]).toMatchObject({ wamid, link: `http://localhost:3000/a/${n.linkToken}` });

    const [latest] = await messages.listOutbox({ phone: n.phone, limit: 1 });
    expect(latest).toMatchObject({ wamid, kind: 'approval_request', status: 'accepted' });
    expect(openPayload(latest!, box)).toMatchObject({
      provider: 'console',
      link_token: n.linkToken,
      preview: {
        buttons: [
          { type: 'quick_reply', payload: `approve:${n.linkToken}` },
          { type: 'quick_reply', payload: `reject:${n.linkToken}` },
          { type: 'url', suffix: n.linkToken },
        ],
      },
    });
  });
});

describe('whatsapp messages store', () => {
  const outbound = (approver = 0, wamid = newWamid(), overrides: Partial<ApprovalNotice> = {}) => {
    const n = noticeFor(approver, overrides);
    return messages.recordOutbound(
      {
        idempotencyKey: n.idempotencyKey,
        accountId: n.accountId,
        documentId: n.documentId,
        approverId: n.approverId,
        phone: n.phone,
        kind: n.kind,
        payload: { test: true },
        wamid,
      },
      box,
    );
  };

  it('recordOutbound is idempotent by key and keeps the first wamid', async () => {
    const n = noticeFor();
    const input = { idempotencyKey: n.idempotencyKey, phone: n.phone, kind: n.kind, payload: {} };
    const first = await messages.recordOutbound({ ...input, wamid: newWamid() }, box);
    const second = await messages.recordOutbound({ ...input, wamid: newWamid() }, box);
    expect(second.id).toBe(first.id);
    expect(second.wamid).toBe(first.wamid);
    expect(await messages.findByWamid(first.wamid!)).toMatchObject({ id: first.id });
  });

  it('an inbound message id is a replay once handled: until then each delivery is handled again', async () => {
    const wamid = newWamid();
    const input = { wamid, phone: '966500000000', kind: 'button_reply', payload: { payload: 'approve:x' } };
    expect(await messages.recordInbound(input, box)).toBe(true);
    // The first delivery's handling did not finish (it failed, or is still under way): Meta's retry is handled.
    expect(await messages.recordInbound({ ...input, approverId: seed.approvers[0]!.id }, box)).toBe(true);
    await messages.markInboundHandled(wamid);
    expect(await messages.recordInbound(input, box)).toBe(false);
    expect(await messages.recordInbound({ ...input, approverId: seed.approvers[0]!.id }, box)).toBe(false);
    // One row, as first recorded, and marked once.
    const inbound = () =>
      database
        .db('whatsapp_messages')
        .where({ wamid, direction: 'in' })
        .select<{ approver_id: string | null; phone: string; handled_at: Date | null }[]>(
          'approver_id',
          'phone',
          'handled_at',
        );
    const rows = await inbound();
    expect(rows).toEqual([
      { approver_id: null, phone: '966500000000', handled_at: expect.any(Date) as Date },
    ]);
    await messages.markInboundHandled(wamid);
    expect(await inbound()).toEqual(rows);
    // Inbound rows are not part of the outbox.
    expect((await messages.listOutbox({ phone: '966500000000' })).map((m) => m.wamid)).not.toContain(wamid);
  });

  it('moves status only forward, failed wins, and every report is kept', async () => {
    const msg = await outbound();
    const wamid = msg.wamid!;
    const recipient = msg.phone;
    const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 9, 41, s));
    const report = (status: 'sent' | 'delivered' | 'read' | 'failed', s: number, errors = []) =>
      messages.recordStatus({ wamid, status, timestamp: at(s), recipient, errors });

    expect(await report('read', 3)).toMatchObject({ changed: true, message: { status: 'read' } });
    expect(await report('delivered', 2)).toMatchObject({ changed: false, message: { status: 'read' } });
    expect(await report('sent', 1)).toMatchObject({ changed: false, message: { status: 'read' } });
    expect(await report('read', 3)).toMatchObject({ changed: false });
    const failed = await messages.recordStatus({
      wamid,
      status: 'failed',
      timestamp: at(4),
      recipient,
      errors: [{ code: 131026, title: 'Message undeliverable', details: 'Message Undeliverable.' }],
    });
    expect(failed).toMatchObject({
      changed: true,
      message: {
        status: 'failed',
        statusAt: at(4),
        statusError: { code: 131026, message: 'Message undeliverable' },
      },
    });
    expect(await report('read', 5)).toMatchObject({ changed: false, message: { status: 'failed' } });

    const history = await messages.statusHistory(wamid);
    expect(history.map((h) => h.status)).toEqual(['sent', 'delivered', 'read', 'failed']);
    expect(history[3]!.errors).toEqual([
      { code: 131026, title: 'Message undeliverable', details: 'Message Undeliverable.' },
    ]);
  });

  it('keeps a status that arrives before the send was recorded, and applies it then', async () => {
    const wamid = newWamid();
    const early = await messages.recordStatus({
      wamid,
      status: 'delivered',
      timestamp: new Date(),
      recipient: seed.approvers[0]!.phone,
      errors: [],
    });
    expect(early).toEqual({ changed: false });
    const msg = await outbound(0, wamid);
    expect(msg.status).toBe('delivered');
  });

  it('an early failed status is applied with its error', async () => {
    const wamid = newWamid();
    await messages.recordStatus({
      wamid,
      status: 'failed',
      timestamp: new Date(),
      errors: [{ code: 131026, title: 'Message undeliverable' }],
    });
    const msg = await outbound(0, wamid);
    expect(msg).toMatchObject({
      status: 'failed',
      statusError: { code: 131026, message: 'Message undeliverable' },
    });
  });

  it('latest status per approver is the most recent message, optionally of some kinds', async () => {
    const [a, b] = seed.approvers;
    const first = await outbound(0);
    await messages.recordStatus({ wamid: first.wamid!, status: 'read', timestamp: new Date(), errors: [] });
    const reminder = await outbound(0, newWamid(), { kind: 'reminder' });
    await messages.recordStatus({
      wamid: reminder.wamid!,
      status: 'failed',
      timestamp: new Date(),
      errors: [{ code: 131047, title: 'Re-engagement message' }],
    });
    await outbound(1);

    const latest = await messages.latestStatusForApprovers([a!.id, b!.id]);
    expect(latest.get(a!.id)).toMatchObject({ messageId: reminder.id, kind: 'reminder', status: 'failed' });
    expect(latest.get(b!.id)).toMatchObject({ kind: 'approval_request', status: 'accepted' });
    expect((await messages.latestStatusForApprover(a!.id, { kinds: ['approval_request'] }))?.status).toBe(
      'read',
    );
    expect(await messages.latestStatusForApprovers([])).toEqual(new Map());
  });

  it('lists the outbox newest first, with paging', async () => {
    const phone = seed.approvers[1]!.phone;
    const m1 = await outbound(1);
    const m2 = await outbound(1);
    const m3 = await outbound(1);
    const page = await messages.listOutbox({ phone, limit: 2 });
    expect(page.map((m) => m.id)).toEqual([m3.id, m2.id]);
    const next = await messages.listOutbox({ phone, limit: 2, beforeId: m2.id, accountId: seed.accountId });
    expect(next.map((m) => m.id)).toEqual([m1.id]);
  });
});
