import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as migration011 from '../../src/db/migrations/011-event-sequence.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { documentEventsStore } from '../../src/features/events/document-events-store.ts';
import { documentsStore } from '../../src/features/documents/documents-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { insertDocument } from './support.ts';

/**
 * `document_events.sequence` (migration 011): 1..n per document without gaps, however events are recorded, and
 * numbered by (created_at, id) for rows that existed before the migration.
 */

let tdb: TestDatabase;
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

const sequencesOf = async (documentId: string) =>
  (
    await tdb
      .db('document_events')
      .where({ document_id: documentId })
      .orderBy('sequence')
      .select<{ sequence: number }[]>('sequence')
  ).map((r) => r.sequence);

describe('document event sequence', () => {
  it('numbers a document’s events 1..n without gaps when many are recorded at once, repeats included', async () => {
    const accountId = await account();
    const a = await insertDocument(tdb.db, accountId);
    const b = await insertDocument(tdb.db, accountId);
    const events = documentEventsStore(tdb.db);
    const N = 24;
    // Each record in a transaction of its own (no caller lock), two documents interleaved, and every dedupe key
    // recorded twice at the same time: a repeat must take no number.
    const keys = Array.from({ length: N }, (_, i) => `test:${i}:${randomUUID()}`);
    const calls = keys.flatMap((key, i) => {
      const doc = i % 2 === 0 ? a.document : b.document;
      const input = {
        accountId,
        documentId: doc.id,
        event: 'approver.completed',
        data: { i },
        dedupeKey: key,
      };
      return [events.record(input), events.record(input)];
    });
    const recorded = await Promise.all(calls);

    const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    expect(await sequencesOf(a.document.id)).toEqual(range(N / 2));
    expect(await sequencesOf(b.document.id)).toEqual(range(N / 2));
    // Both calls of a key answer the same stored event.
    for (let i = 0; i < recorded.length; i += 2) {
      expect(recorded[i]!.id).toBe(recorded[i + 1]!.id);
      expect(recorded[i]!.sequence).toBe(recorded[i + 1]!.sequence);
    }
  });

  it('numbers within the caller’s transaction, after its own lock on the document', async () => {
    const accountId = await account();
    const { document } = await insertDocument(tdb.db, accountId);
    const recorded = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        tdb.db.transaction(async (trx) => {
          await documentsStore(trx).findByIdUnscoped(document.id, { forUpdate: true });
          return documentEventsStore(trx).record({
            accountId,
            documentId: document.id,
            event: 'approver.completed',
            data: { i },
            dedupeKey: `trx:${i}:${randomUUID()}`,
          });
        }),
      ),
    );
    expect(recorded.map((e) => e.sequence).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const listed = await documentEventsStore(tdb.db).listByDocument(accountId, document.id);
    expect(listed.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('migration 011 numbers existing events per document by created_at, then id', async () => {
    const accountId = await account();
    const a = await insertDocument(tdb.db, accountId);
    const b = await insertDocument(tdb.db, accountId);
    await migration011.down(tdb.db);
    try {
      // As rows were before the migration: no sequence, ids not in created_at order.
      const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
      const rows = [
        { doc: a, at: t(30), key: 'a3' },
        { doc: a, at: t(10), key: 'a1' },
        { doc: b, at: t(5), key: 'b1' },
        { doc: a, at: t(20), key: 'a2a' },
        { doc: a, at: t(20), key: 'a2b' }, // same time: the lower id first
        { doc: b, at: t(50), key: 'b2' },
      ];
      for (const r of rows) {
        await tdb.db('document_events').insert({
          account_id: accountId,
          document_id: r.doc.document.id,
          event: 'document.sent',
          data: {},
          dedupe_key: `${r.key}:${randomUUID()}`,
          created_at: r.at,
        });
      }
    } finally {
      await migration011.up(tdb.db);
    }
    const keysInOrder = async (documentId: string) =>
      (
        await tdb
          .db('document_events')
          .where({ document_id: documentId })
          .orderBy('sequence')
          .select<{ dedupe_key: string; sequence: number }[]>('dedupe_key', 'sequence')
      ).map((r) => [r.dedupe_key.split(':')[0], r.sequence]);
    expect(await keysInOrder(a.document.id)).toEqual([
      ['a1', 1],
      ['a2a', 2],
      ['a2b', 3],
      ['a3', 4],
    ]);
    expect(await keysInOrder(b.document.id)).toEqual([
      ['b1', 1],
      ['b2', 2],
    ]);
    // New events go on from there.
    const next = await documentEventsStore(tdb.db).record({
      accountId,
      documentId: a.document.id,
      event: 'document.voided',
      data: {},
      dedupeKey: randomUUID(),
    });
    expect(next.sequence).toBe(5);
  });
});
