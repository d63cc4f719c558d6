import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newWamid } from '../fakes/fake-graph-api.ts';
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
import { installRecordFaults, type RecordFaults } from '../helpers/record-faults.ts';

/**
 * The outbox through the real workflow, worker and Temporal server: the fake Graph API answers, then PostgreSQL
 * refuses to record the answer (a trigger). Recording is tried twice in-process here (WHATSAPP_RECORD_ATTEMPTS),
 * so two injected failures fail the activity's first attempt after the send; Temporal's retry must find the
 * answer in the heartbeat details and record it without sending again.
 */
let h: FlowHarness;
let faults: RecordFaults;
beforeAll(async () => {
  h = await startFlowHarness({ env: { WHATSAPP_RECORD_ATTEMPTS: '2', WHATSAPP_RECORD_BACKOFF_MS: '10' } });
  faults = await installRecordFaults(h.service.database.db);
});
afterAll(() => h.close());
beforeEach(() => faults.failNext(0));

const outboundRows = (documentId: string) =>
  h.service.database
    .db('whatsapp_messages')
    .where({ document_id: documentId, direction: 'out' })
    .orderBy('id')
    .select<{ wamid: string | null; status: string; phone: string }[]>('wamid', 'status', 'phone');

describe('a notification whose record fails after WhatsApp accepted it', () => {
  it(
    'the activity fails after the send, its retry records the answer from the heartbeat: one message, not two',
    { timeout: 120_000 },
    async () => {
      await faults.failNext(2); // both in-process tries of the first attempt
      const since = messagesTo(h, PHONES.saudiA).length;
      const doc = await createDocument(h, {
        workflowType: 'parallel',
        approvers: [{ name: 'Sara', phone: PHONES.saudiA, action_type: 'approve_only' }],
      });
      expect((await send(h, doc.id)).status).toBe(200);

      const status = await eventually(async () => {
        const s = await statusOf(h, doc.id);
        return s.approvers[0]!.status === 'notified' && s;
      }, 90_000);
      expect(await faults.calls()).toBe(3); // two refused records (attempt 1), then the retry's record
      const sent = messagesTo(h, PHONES.saudiA).slice(since);
      expect(sent).toHaveLength(1);
      expect(await outboundRows(doc.id)).toEqual([
        { wamid: sent[0]!.wamid, status: 'accepted', phone: PHONES.saudiA },
      ]);
      expect(status.approvers[0]!.notification).toMatchObject({ status: 'accepted', error: null });
    },
  );
});

describe('a record that keeps failing across attempts', () => {
  it(
    'each retry records the kept answer again instead of sending; the first record that succeeds ends it',
    { timeout: 120_000 },
    async () => {
      await faults.failNext(4); // attempt 1 (after its send) and attempt 2 (recording the kept answer) both fail
      const since = messagesTo(h, PHONES.saudiC).length;
      const doc = await createDocument(h, {
        workflowType: 'parallel',
        approvers: [{ name: 'Noura', phone: PHONES.saudiC, action_type: 'approve_only' }],
      });
      expect((await send(h, doc.id)).status).toBe(200);

      await eventually(async () => (await statusOf(h, doc.id)).approvers[0]!.status === 'notified', 90_000);
      expect(await faults.calls()).toBe(5);
      const sent = messagesTo(h, PHONES.saudiC).slice(since);
      expect(sent).toHaveLength(1);
      expect(await outboundRows(doc.id)).toEqual([
        { wamid: sent[0]!.wamid, status: 'accepted', phone: PHONES.saudiC },
      ]);
    },
  );
});

describe('a provider that repeats a message id', () => {
  it(
    'two approvers notified with the same id: both recorded and notified, each sent once',
    { timeout: 120_000 },
    async () => {
      const shared = newWamid();
      // Numbers no other test here messages, so no other document's message takes the repeated id.
      const phones = ['966531236001', '966531236002'];
      const since = phones.map((p) => messagesTo(h, p).length);
      for (const phone of phones) h.graph.scriptFor(phone, { kind: 'ok', wamid: shared });
      const doc = await createDocument(h, {
        workflowType: 'parallel',
        approvers: phones.map((phone, i) => ({
          name: `Approver ${i + 1}`,
          phone,
          action_type: 'approve_only',
        })),
      });
      expect((await send(h, doc.id)).status).toBe(200);

      await eventually(
        async () => (await statusOf(h, doc.id)).approvers.every((a) => a.status === 'notified'),
        90_000,
      );
      phones.forEach((p, i) => expect(messagesTo(h, p).length - since[i]!).toBe(1));
      const rows = await outboundRows(doc.id);
      expect(rows).toHaveLength(2);
      expect(rows.every((r) => r.wamid === shared && r.status === 'accepted')).toBe(true);
      expect(new Set(rows.map((r) => r.phone))).toEqual(new Set(phones));
    },
  );
});
