import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { createDb, type Knex } from '../../src/db/knex.ts';
import { named } from '../../src/db/prepared.ts';
import { whatsAppMessagesStore } from '../../src/db/stores/whatsapp-messages-store.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { lockForAction } from '../../src/features/approval/action-lock-store.ts';
import {
  approversStore,
  toApprover,
  type ApproverRow,
} from '../../src/features/documents/approvers-store.ts';
import {
  documentsStore,
  toDocument,
  type DocumentRow,
} from '../../src/features/documents/documents-store.ts';
import { documentEventsStore } from '../../src/features/events/document-events-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

let database: TestDatabase;
/** One connection: every statement below runs where the earlier ones were prepared. */
let single: Knex;
let documentId: string;
let accountId: string;
const box = createSecretBox([{ id: 'test', key: randomBytes(32) }]);

beforeAll(async () => {
  database = await createTestDatabase();
  single = createDb(database.url, { poolMax: 1 });
  const db = database.db;
  const account = await accountsStore(db).create({
    name: 'Named',
    email: `named-${randomUUID()}@example.com`,
    passwordHash: 'x',
    plan: 'basic',
  });
  accountId = account.id;
  documentId = randomUUID();
  await db('documents').insert({
    id: documentId,
    account_id: account.id,
    reference: 'WQT-2026-000001',
    title_ar: 'عقد',
    title_en: 'Contract',
    status: 'in_progress',
    expires_at: new Date(Date.now() + 86_400_000),
    file_key: 'test/file.pdf',
    file_sha256: 'a'.repeat(64),
    file_size: 1234,
    page_count: 2,
    cc: JSON.stringify([{ name: 'Cc', phone: '966500000009' }]),
  });
  await db('approvers').insert(
    [2, 1, 1].map((order, i) => ({
      document_id: documentId,
      account_id: account.id,
      name_ar: `م${i}`,
      name_en: `A${i}`,
      phone: `96650000000${i}`,
      order_index: order,
      status: 'waiting',
    })),
  );
});
afterAll(async () => {
  await single?.destroy();
  await database?.drop();
});

/** What `select *` gives, mapped as before the statements were named. */
async function unnamedApprovers(db: Knex | Knex.Transaction) {
  const rows = await db<ApproverRow>('approvers')
    .where({ document_id: documentId })
    .orderBy(['order_index', 'created_at', 'id']);
  return rows.map(toApprover);
}
async function unnamedDocument(db: Knex | Knex.Transaction) {
  return toDocument((await db<DocumentRow>('documents').where({ id: documentId }).first())!);
}

describe('named statements on the write path', () => {
  it('return what the unnamed statements returned', async () => {
    const expected = await unnamedApprovers(single);
    expect(expected).toHaveLength(3);
    expect(await approversStore(single).listByDocument(documentId)).toEqual(expected);
    const document = await unnamedDocument(single);
    expect(document.cc).toEqual([{ name: 'Cc', phone: '966500000009' }]);
    expect(await documentsStore(single).findByIdUnscoped(documentId)).toEqual(document);
    await single.transaction(async (trx) => {
      expect(await documentsStore(trx).findByIdUnscoped(documentId, { forUpdate: true })).toEqual(document);
      const locked = await lockForAction(trx, documentId);
      expect(locked?.document).toEqual(document);
      expect(locked?.protocol).toBeUndefined();
      expect(locked?.now).toBeInstanceOf(Date);
    });
    expect(await documentsStore(single).findByIdUnscoped(randomUUID(), { forUpdate: true })).toBeUndefined();
  });

  it('still work on the same connection after a migration adds a column to their tables', async () => {
    const approvers = approversStore(single);
    const documents = documentsStore(single);
    const before = await approvers.listByDocument(documentId);
    const document = await documents.findByIdUnscoped(documentId);
    // The hazard, shown on this connection: a named `select *` prepared before the column fails after it.
    const star = () => single('approvers').where({ document_id: documentId }).options(named('test_star'));
    await star();

    await single.raw('ALTER TABLE approvers ADD COLUMN added_by_a_later_release text');
    await single.raw('ALTER TABLE documents ADD COLUMN added_by_a_later_release text');

    await expect(star()).rejects.toMatchObject({ code: '0A000' });
    expect(await approvers.listByDocument(documentId)).toEqual(before);
    expect(await documents.findByIdUnscoped(documentId)).toEqual(document);
    await single.transaction(async (trx) => {
      expect(await documentsStore(trx).findByIdUnscoped(documentId, { forUpdate: true })).toEqual(document);
      expect((await lockForAction(trx, documentId))?.document).toEqual(document);
    });
  });

  it('still work when the column is added inside the transaction that prepared them', async () => {
    const document = await documentsStore(single).findByIdUnscoped(documentId);
    const before = await approversStore(single).listByDocument(documentId);
    await single.transaction(async (trx) => {
      expect((await lockForAction(trx, documentId))?.document).toEqual(document);
      expect(await documentsStore(trx).findByIdUnscoped(documentId, { forUpdate: true })).toEqual(document);
      expect(await approversStore(trx).listByDocument(documentId)).toEqual(before);
      await trx.raw('ALTER TABLE documents ADD COLUMN added_in_transaction integer DEFAULT 7');
      await trx.raw('ALTER TABLE approvers ADD COLUMN added_in_transaction integer DEFAULT 7');
      expect((await lockForAction(trx, documentId))?.document).toEqual(document);
      expect(await documentsStore(trx).findByIdUnscoped(documentId, { forUpdate: true })).toEqual(document);
      expect(await approversStore(trx).listByDocument(documentId)).toEqual(before);
    });
  });

  it('record events and outbound messages after a migration adds a column to their tables', async () => {
    const events = documentEventsStore(single);
    const messages = whatsAppMessagesStore(single);
    const event = (n: number) => ({
      accountId,
      documentId,
      event: 'document.sent',
      data: { n },
      dedupeKey: `document.sent:${documentId}:${n}`,
    });
    const outbound = () => ({
      idempotencyKey: `named-${randomUUID()}`,
      accountId,
      documentId,
      phone: '966500000001',
      kind: 'approval_request',
      payload: { text: 'hello' },
    });
    const send = async () => {
      const input = outbound();
      const claimed = await messages.claimOutbound(input, box);
      const wamid = `wamid.${randomUUID()}`;
      await messages.recordStatus({ wamid, status: 'delivered', timestamp: new Date(), errors: [] });
      const recorded = await messages.recordOutbound({ ...input, wamid }, box);
      return { claimed, recorded };
    };
    const first = await events.record(event(1));
    const sent = await send();
    expect(sent.claimed).toMatchObject({ claimed: true, message: { status: 'sending' } });
    expect(sent.recorded).toMatchObject({ status: 'delivered', sharedWith: [] });

    await single.raw('ALTER TABLE document_events ADD COLUMN added_by_a_later_release text');
    await single.raw('ALTER TABLE whatsapp_messages ADD COLUMN added_by_a_later_release text');

    const second = await events.record(event(2));
    expect(second).toEqual({
      ...first,
      id: second.id,
      sequence: 2,
      data: { n: 2 },
      dedupeKey: event(2).dedupeKey,
      createdAt: second.createdAt,
    });
    expect(await events.record(event(2))).toEqual(second);
    const again = await send();
    expect(again.claimed).toMatchObject({ claimed: true, message: { status: 'sending' } });
    expect(again.recorded).toMatchObject({ status: 'delivered', sharedWith: [] });
  });
});
