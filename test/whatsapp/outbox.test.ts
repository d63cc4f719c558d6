import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import {
  openPayload,
  whatsAppMessagesStore,
  type WhatsAppMessagesStore,
} from '../../src/db/stores/whatsapp-messages-store.ts';
import { createCloudProvider } from '../../src/whatsapp/cloud-provider.ts';
import {
  sendNotice,
  type ProviderAnswerMemory,
  type SendNoticeDeps,
} from '../../src/whatsapp/send-notice.ts';
import type { ApprovalNotice, WhatsAppProvider } from '../../src/whatsapp/types.ts';
import { newWamid, startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { eventually } from '../helpers/approval-flow.ts';
import { installRecordFaults, type RecordFaults } from '../helpers/record-faults.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { notice, seedDocument, templates } from '../helpers/whatsapp-fixtures.ts';

/**
 * The outbox, against a real PostgreSQL whose trigger makes recording a sent message fail for real, and the
 * Cloud API provider talking HTTP to the fake Graph API. The Temporal side (the heartbeat that carries the answer
 * to the next attempt) is tested through the workflow in test/approval/outbox-flow.test.ts.
 */
let database: TestDatabase;
const box = createSecretBox([{ id: 'test', key: randomBytes(32) }]);
let messages: WhatsAppMessagesStore;
let fake: FakeGraphApi;
let cloud: WhatsAppProvider;
let faults: RecordFaults;
let seed: Awaited<ReturnType<typeof seedDocument>>;

beforeAll(async () => {
  database = await createTestDatabase();
  messages = whatsAppMessagesStore(database.db);
  faults = await installRecordFaults(database.db);
  fake = await startFakeGraphApi();
  cloud = createCloudProvider({
    apiUrl: fake.apiUrl,
    phoneNumberId: fake.phoneNumberId,
    accessToken: fake.accessToken,
    timeoutMs: 5_000,
    templates,
  });
});
afterAll(async () => {
  await fake.close();
  await database.drop();
});
beforeEach(async () => {
  fake.reset();
  await faults.failNext(0);
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

function warnings() {
  const seen: { obj: object; msg: string }[] = [];
  return {
    seen,
    logger: {
      warn: (obj: object, msg: string) => {
        seen.push({ obj, msg });
      },
    },
  };
}

/** What the activity's heartbeat does, in memory: the last kept answer is what the next attempt recalls. */
function memory(): ProviderAnswerMemory & { kept: string[] } {
  const kept: string[] = [];
  return { kept, recall: () => kept.at(-1), keep: (wamid) => kept.push(wamid) };
}

const deps = (extra: Partial<SendNoticeDeps> = {}): SendNoticeDeps => ({
  provider: cloud,
  messages,
  secrets: box,
  templates,
  recordRetry: { attempts: 3, backoffMs: 1 },
  ...extra,
});

describe('the outbox row is written before the message is sent', () => {
  it('while the Graph API has the request, the row is committed as sending with the request it carries', async () => {
    const n = noticeFor();
    fake.scriptFor(n.phone, { kind: 'delay', ms: 3_000 }); // long enough to look at the row while the request is held
    const sending = sendNotice(deps(), n);
    await eventually(() => fake.requests.length === 1);
    const during = await messages.findByIdempotencyKey(n.idempotencyKey);
    expect(during).toMatchObject({
      status: 'sending',
      wamid: null,
      direction: 'out',
      approverId: n.approverId,
    });
    expect(openPayload(during!, box)).toMatchObject({ provider: 'cloud', request: fake.requests[0]!.body });

    const { wamid } = await sending;
    expect(wamid).toBe(fake.requests[0]!.wamid);
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      id: during!.id,
      wamid,
      status: 'accepted',
    });
  });
});

describe('the Graph API answers, then recording the answer fails', () => {
  it('fails once: recorded by the in-process retry, one message sent', async () => {
    const n = noticeFor();
    await faults.failNext(1);
    const log = warnings();
    const result = await sendNotice(deps({ logger: log.logger }), n);

    expect(await faults.calls()).toBe(2); // the injected failure happened, then the record went through
    expect(fake.requests).toHaveLength(1);
    expect(result).toEqual({ wamid: fake.requests[0]!.wamid, deduplicated: false });
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      wamid: result.wamid,
      status: 'accepted',
    });
    expect(log.seen.map((w) => w.msg)).toEqual([expect.stringContaining('trying again')]);
  });

  it('fails on every try: the attempt fails, the next one records the kept answer and sends nothing', async () => {
    const n = noticeFor();
    const kept = memory();
    await faults.failNext(2);
    await expect(
      sendNotice(deps({ memory: kept, recordRetry: { attempts: 2, backoffMs: 1 } }), n),
    ).rejects.toThrow(/injected fault/);
    expect(fake.requests).toHaveLength(1);
    expect(kept.kept).toEqual([fake.requests[0]!.wamid]);
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      wamid: null,
      status: 'sending',
    });

    const retried = await sendNotice(deps({ memory: kept }), n);
    expect(retried).toEqual({ wamid: fake.requests[0]!.wamid, deduplicated: true });
    expect(fake.requests).toHaveLength(1);
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      wamid: retried.wamid,
      status: 'accepted',
    });
    expect(await faults.calls()).toBe(3);

    // And once recorded, any later attempt finds the row: still one message.
    expect(await sendNotice(deps(), n)).toEqual({ wamid: retried.wamid, deduplicated: true });
    expect(fake.requests).toHaveLength(1);
  });

  it('a kept answer is recorded even when the row was lost with the failed attempt', async () => {
    const n = noticeFor();
    const wamid = newWamid();
    const retried = await sendNotice(deps({ memory: { recall: () => wamid, keep: () => undefined } }), n);
    expect(retried).toEqual({ wamid, deduplicated: true });
    expect(fake.requests).toHaveLength(0);
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      wamid,
      status: 'accepted',
    });
  });
});

describe('a provider that repeats a message id', () => {
  it('two messages with the same id are both recorded: no failure, no retry, no second send', async () => {
    const shared = newWamid();
    const first = noticeFor(0);
    const second = noticeFor(1);
    for (const n of [first, second]) fake.scriptFor(n.phone, { kind: 'ok', wamid: shared });
    const log = warnings();
    expect(await sendNotice(deps({ logger: log.logger }), first)).toEqual({
      wamid: shared,
      deduplicated: false,
    });
    expect(await sendNotice(deps({ logger: log.logger }), second)).toEqual({
      wamid: shared,
      deduplicated: false,
    });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests.map((r) => (r.body as { to: string }).to)).toEqual([first.phone, second.phone]);

    const rows = [
      await messages.findByIdempotencyKey(first.idempotencyKey),
      await messages.findByIdempotencyKey(second.idempotencyKey),
    ];
    expect(rows).toMatchObject([
      { wamid: shared, status: 'accepted', approverId: first.approverId },
      { wamid: shared, status: 'accepted', approverId: second.approverId },
    ]);
    expect(log.seen).toEqual([
      {
        msg: expect.stringContaining('already given another message') as string,
        obj: expect.objectContaining({ wamid: shared, sharedWith: [first.idempotencyKey] }) as object,
      },
    ]);

    // Retries of either find their row and send nothing.
    await sendNotice(deps(), first);
    await sendNotice(deps(), second);
    expect(fake.requests).toHaveLength(2);

    // A delivery status names only the id, so it moves both messages.
    const reported = await messages.recordStatus({
      wamid: shared,
      status: 'delivered',
      timestamp: new Date(),
      errors: [],
    });
    expect(reported.changed).toBe(true);
    expect((await messages.findByIdempotencyKey(first.idempotencyKey))!.status).toBe('delivered');
    expect((await messages.findByIdempotencyKey(second.idempotencyKey))!.status).toBe('delivered');
  });

  it('inbound message ids stay unique (the replay dedupe), apart from outbound ones', async () => {
    const shared = newWamid();
    const n = noticeFor();
    fake.scriptFor(n.phone, { kind: 'ok', wamid: shared });
    await sendNotice(deps(), n);
    const inbound = { wamid: shared, phone: seed.approvers[0]!.phone, kind: 'button_reply', payload: {} };
    expect(await messages.recordInbound(inbound, box)).toBe(true);
    await messages.markInboundHandled(shared);
    expect(await messages.recordInbound(inbound, box)).toBe(false);
    // The outbound row with the same id is untouched by the inbound one's handling.
    expect(await database.db('whatsapp_messages').where({ wamid: shared }).orderBy('id')).toMatchObject([
      { direction: 'out', handled_at: null },
      { direction: 'in', handled_at: expect.any(Date) as Date },
    ]);
  });
});

describe('the one duplicate left: an attempt that stopped inside the provider call', () => {
  it('a sending row with no answer anywhere is sent again, once, with a warning', async () => {
    const n = noticeFor();
    // What an attempt leaves when the process dies while the Graph API call is in flight: the claimed row only.
    const { message: claimed } = await messages.claimOutbound(
      {
        idempotencyKey: n.idempotencyKey,
        accountId: n.accountId,
        documentId: n.documentId,
        approverId: n.approverId,
        phone: n.phone,
        kind: n.kind,
        payload: {},
      },
      box,
    );
    expect(claimed).toMatchObject({ status: 'sending', wamid: null });

    const log = warnings();
    const { wamid } = await sendNotice(deps({ logger: log.logger, memory: memory() }), n);
    expect(fake.requests).toHaveLength(1);
    expect(log.seen.map((w) => w.msg)).toEqual([expect.stringContaining('outcome is unknown')]);
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      id: claimed.id,
      wamid,
      status: 'accepted',
    });

    await sendNotice(deps(), n);
    expect(fake.requests).toHaveLength(1);
  });

  it('a refused send leaves no answer either: the retry sends, and the row keeps one id', async () => {
    const n = noticeFor();
    fake.scriptFor(n.phone, { kind: 'raw', status: 503 });
    await expect(sendNotice(deps(), n)).rejects.toMatchObject({ retryable: true });
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      status: 'pending',
      wamid: null,
    });
    const { wamid } = await sendNotice(deps(), n);
    expect(fake.requests).toHaveLength(2);
    expect(await messages.findByIdempotencyKey(n.idempotencyKey)).toMatchObject({
      wamid,
      status: 'accepted',
      statusError: null,
    });
  });
});
