import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { approversStore, openLinkToken } from '../../src/features/documents/approvers-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { seedDocument } from '../helpers/whatsapp-fixtures.ts';

/** The links a send gives a document's approvers: one each, sealed to that approver, written at once. */
let database: TestDatabase;
const box = createSecretBox([{ id: 'test', key: randomBytes(32) }]);
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

describe('issueLinkTokens', () => {
  it('gives each approver without a link their own, in one write, and leaves a link already given alone', async () => {
    const { documentId, approvers } = await seedDocument(database.db, 4);
    const store = approversStore(database.db);
    const kept = await store.ensureLinkToken(approvers[0]!.id, box);

    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    database.db.on('query', listen);
    try {
      expect(await store.issueLinkTokens(documentId, box)).toBe(3);
    } finally {
      database.db.off('query', listen);
    }
    // The approvers without a link, then one UPDATE for all of them.
    expect(statements).toHaveLength(2);
    expect(statements[1]).toMatch(/^UPDATE approvers a SET link_token_sha256/);

    const rows = await store.listByDocument(documentId);
    const tokens = rows.map((a) => openLinkToken(a, box));
    expect(tokens[0]).toBe(kept);
    expect(new Set(tokens).size).toBe(4);
    for (const [i, a] of rows.entries()) {
      expect(tokens[i]).toEqual(expect.any(String));
      expect((await store.findByLinkToken(tokens[i]!))?.id).toBe(a.id);
    }
    // Nothing left to give.
    expect(await store.issueLinkTokens(documentId, box)).toBe(0);
  });

  it('takes the approvers the caller read under the document’s lock, and then only writes', async () => {
    const { documentId } = await seedDocument(database.db, 3);
    const store = approversStore(database.db);
    const read = await store.listByDocument(documentId);
    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    database.db.on('query', listen);
    try {
      expect(await store.issueLinkTokens(documentId, box, read)).toBe(3);
    } finally {
      database.db.off('query', listen);
    }
    expect(statements).toEqual([
      expect.stringMatching(/^UPDATE approvers a SET link_token_sha256/) as string,
    ]);
    const tokens = (await store.listByDocument(documentId)).map((a) => openLinkToken(a, box));
    expect(new Set(tokens).size).toBe(3);
    expect(tokens.every((t) => typeof t === 'string')).toBe(true);
  });
});
