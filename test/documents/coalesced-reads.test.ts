import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Knex } from '../../src/db/knex.ts';
import { coalescedDocumentReads } from '../../src/features/documents/documents-store.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  createDraft,
  documentOf,
  PHONE_A,
  PHONE_B,
  startDocumentsService,
  type DocumentJson,
  type DocumentsService,
} from './support.ts';

let service: DocumentsService;
let owner: TestAccount;
let other: TestAccount;
let mine: DocumentJson[];
let theirs: DocumentJson;
/**
 * A pool of its own for the tests that count connections taken: the service's pool also serves its background work
 * (outbox sweeps and the like), whose connections would be counted with the reads'.
 */
let counted: Knex;

beforeAll(async () => {
  service = await startDocumentsService();
  owner = await service.createAccount();
  other = await service.createAccount();
  mine = [
    await createDraft(service, owner, { title: 'First' }, [
      { name: 'Ali', phone: PHONE_A },
      { name: 'Sara', phone: PHONE_B },
    ]),
    await createDraft(service, owner, { title: 'Second' }),
  ];
  theirs = await createDraft(service, other, { title: 'Theirs' });
  counted = createDb(service.database.url, { poolMax: 4 });
});
afterAll(async () => {
  await counted.destroy();
  await service.close();
});

/** Counts the pooled connections taken while `run` runs: one per query the coalescer sends. */
async function connectionsTaken<T>(db: Knex, run: () => Promise<T>): Promise<{ result: T; taken: number }> {
  const client = db.client as { acquireConnection: () => Promise<unknown> };
  const acquire = client.acquireConnection.bind(client);
  let taken = 0;
  client.acquireConnection = () => {
    taken++;
    return acquire();
  };
  try {
    return { result: await run(), taken };
  } finally {
    client.acquireConnection = acquire;
  }
}

describe('coalesced document reads', () => {
  it('answers the reads of one turn with one query, each its own document of its own account', async () => {
    const reads = coalescedDocumentReads(counted);
    const { result, taken } = await connectionsTaken(counted, () =>
      Promise.all([
        reads.find(owner.accountId, mine[0]!.id),
        reads.find(other.accountId, theirs.id),
        reads.find(owner.accountId, mine[1]!.id),
        // Another account's document, an unknown id, the same read twice, and ids that are no UUID.
        reads.find(owner.accountId, theirs.id),
        reads.find(owner.accountId, randomUUID()),
        reads.find(owner.accountId, mine[0]!.id.toUpperCase()),
        reads.find(owner.accountId, '__proto__'),
        reads.find(owner.accountId, `${mine[0]!.id}'}`),
        reads.find(owner.accountId, 'a'.repeat(100_000)),
      ]),
    );
    expect(taken).toBe(1);
    const [first, their, second, stranger, unknown, upper, proto, quoted, huge] = result;
    expect(first).toMatchObject({ id: mine[0]!.id, title_en: 'First', status: 'draft' });
    expect(first?.approvers.map((a) => a.phone)).toEqual([PHONE_A, PHONE_B]);
    expect(their).toMatchObject({ id: theirs.id, title_en: 'Theirs' });
    expect(second).toMatchObject({ id: mine[1]!.id, title_en: 'Second' });
    expect(upper?.id).toBe(mine[0]!.id);
    expect([stranger, unknown, proto, quoted, huge]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('sends a batch larger than its limit as several queries and answers every read', async () => {
    const reads = coalescedDocumentReads(counted, 4);
    const ids = Array.from({ length: 10 }, (_, i) => mine[i % 2]!.id);
    const { result, taken } = await connectionsTaken(counted, () =>
      Promise.all(ids.map((id) => reads.find(owner.accountId, id))),
    );
    expect(taken).toBe(3);
    expect(result.map((r) => r?.id)).toEqual(ids);
  });

  it('runs at most two queries at once: reads asked meanwhile wait and go out together', async () => {
    const db = counted;
    const client = db.client as {
      acquireConnection: () => Promise<unknown>;
      releaseConnection: (connection: unknown) => Promise<unknown>;
    };
    const acquire = client.acquireConnection.bind(client);
    const release = client.releaseConnection.bind(client);
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    let taken = 0;
    let running = 0;
    let peak = 0;
    client.acquireConnection = async () => {
      taken++;
      peak = Math.max(peak, ++running);
      await held; // the first queries stay in flight while later turns ask
      return acquire();
    };
    client.releaseConnection = (connection) => {
      running--;
      return release(connection);
    };
    try {
      const reads = coalescedDocumentReads(db);
      const asked: Promise<unknown>[] = [];
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      for (let t = 0; t < 4; t++) {
        for (const doc of [mine[0]!, mine[1]!]) asked.push(reads.find(owner.accountId, doc.id));
        await turn();
      }
      expect(taken).toBe(2);
      open();
      const found = (await Promise.all(asked)) as { id: string }[];
      expect(found.map((f) => f.id)).toEqual(
        Array.from({ length: 4 }, () => [mine[0]!.id, mine[1]!.id]).flat(),
      );
      // Two turns' queries, then the two turns that waited as one.
      expect(taken).toBe(3);
      expect(peak).toBe(2);
    } finally {
      client.acquireConnection = acquire;
      client.releaseConnection = release;
    }
  });

  it('reads again for a read asked after a write: the write is seen', async () => {
    const reads = coalescedDocumentReads(service.database.db);
    const before = await reads.find(owner.accountId, mine[1]!.id);
    await service.database
      .db('documents')
      .where({ id: mine[1]!.id })
      .update({ title_en: 'Renamed', status: 'voided' });
    const after = await reads.find(owner.accountId, mine[1]!.id);
    expect(before).toMatchObject({ title_en: 'Second', status: 'draft' });
    expect(after).toMatchObject({ title_en: 'Renamed', status: 'voided' });
    await service.database
      .db('documents')
      .where({ id: mine[1]!.id })
      .update({ title_en: 'Second', status: 'draft' });
  });

  it('fails every read of a batch whose query fails, and leaves the next batch to its own fate', async () => {
    const broken = createDb(service.database.url, { poolMax: 1 });
    await broken.destroy();
    const reads = coalescedDocumentReads(broken);
    const results = await Promise.allSettled([
      reads.find(owner.accountId, mine[0]!.id),
      reads.find(other.accountId, theirs.id),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    const working = coalescedDocumentReads(service.database.db);
    expect((await working.find(owner.accountId, mine[0]!.id))?.id).toBe(mine[0]!.id);
  });
});

describe('GET /documents/{id} with many clients at once', () => {
  it('gives each request its own account’s document, and 404 for another account’s', async () => {
    const asks = Array.from({ length: 60 }, (_, i) => {
      const doc = [mine[0]!, mine[1]!, theirs][i % 3]!;
      const account = i % 2 === 0 ? owner : other;
      const expected = (doc.id === theirs.id) === (account === other) ? 200 : 404;
      return { doc, account, expected };
    });
    const answers = await Promise.all(
      asks.map((a) => service.request(`/documents/${a.doc.id}`, { account: a.account })),
    );
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(asks[i]!.expected);
      if (res.status === 200) expect(documentOf(await res.json()).id).toBe(asks[i]!.doc.id);
      else await res.body?.cancel();
    }
  });

  it('shows a change on the very next read', async () => {
    const res = await service.request(`/documents/${mine[0]!.id}`, {
      method: 'PUT',
      account: owner,
      body: JSON.stringify({ title: 'Changed' }),
    });
    expect(res.status).toBe(200);
    const read = await service.request(`/documents/${mine[0]!.id}`, { account: owner });
    expect(documentOf(await read.json())).toMatchObject({ title_en: 'Changed' });
  });
});
