import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import type { ApiScope } from '../../src/auth/api-key-format.ts';
import { documentForm } from '../helpers/multipart.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  approverOf,
  createDraft,
  documentOf,
  expectError,
  expectValidation,
  PHONE_A,
  PHONE_B,
  startDocumentsService,
  type DocumentsService,
} from './support.ts';

let service: DocumentsService;
let account: TestAccount;
let pdf: Buffer;
beforeAll(async () => {
  service = await startDocumentsService();
  account = await service.createAccount();
  pdf = await makePdf(2);
});
afterAll(() => service.close());

const REUSED = {
  'Idempotency-Key': [
    'This Idempotency-Key was already used for a different request; use a new key for a new request',
  ],
};

const createWithKey = (key: string, title = 'Idempotent', who = account) =>
  service.request('/documents', {
    method: 'POST',
    account: who,
    headers: { 'idempotency-key': key },
    // A new FormData each time: a new multipart boundary, as a client retrying would send.
    body: documentForm({ title }, { file: pdf, approvers: [{ name: 'Ali', phone: PHONE_A }] }),
  });

const addWithKey = (documentId: string, key: string, body: unknown, who = account) =>
  service.request(`/documents/${documentId}/approvers`, {
    method: 'POST',
    account: who,
    headers: { 'idempotency-key': key },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** Another API key of the same account. */
async function anotherKey(who: TestAccount, scopes?: readonly ApiScope[]): Promise<TestAccount> {
  const issued = await issueApiKey(service.database.db, {
    accountId: who.accountId,
    name: 'second key',
    ...(scopes ? { scopes } : {}),
  });
  return {
    accountId: who.accountId,
    apiKeyId: issued.apiKey.id,
    key: issued.apiKey.key,
    secret: issued.secret,
    authorization: `Bearer ${issued.apiKey.key}:${issued.secret}`,
  };
}

const countDocuments = async (who = account) =>
  Number(
    (
      await service.database
        .db('documents')
        .where({ account_id: who.accountId })
        .count<{ count: string }[]>({ count: '*' })
    )[0]!.count,
  );

describe('Idempotency-Key', () => {
  it('replays a document creation: same status and body, marked, one document, one file', async () => {
    const key = randomUUID();
    const first = await createWithKey(key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = documentOf(await first.json());
    const documents = await countDocuments();
    const files = await service.storedFiles();

    const again = await createWithKey(key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(documentOf(await again.json())).toEqual(created);
    expect(await countDocuments()).toBe(documents);
    expect(await service.storedFiles()).toEqual(files);
  });

  it('the same key with a different request is a 422, and its upload is not kept', async () => {
    const key = randomUUID();
    expect((await createWithKey(key, 'First')).status).toBe(201);
    const files = await service.storedFiles();
    await expectValidation(await createWithKey(key, 'Second'), REUSED, 'idempotency_key_reused');
    expect(await service.storedFiles()).toEqual(files);
    // …and on another route.
    const doc = await createDraft(service, account);
    await expectValidation(
      await addWithKey(doc.id, key, { name: 'B', phone: PHONE_B }),
      REUSED,
      'idempotency_key_reused',
    );
  });

  it('JSON bodies compare by content, not key order or spacing', async () => {
    const doc = await createDraft(service, account);
    const key = randomUUID();
    const first = await addWithKey(doc.id, key, { name: 'B', phone: PHONE_B, role_en: 'CFO' });
    expect(first.status).toBe(201);
    const again = await addWithKey(
      doc.id,
      key,
      '{ "role_en": "CFO",  "phone": "966551234567", "name": "B" }',
    );
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(approverOf(await again.json())).toEqual(approverOf(await first.json()));
    expect(await service.database.db('approvers').where({ document_id: doc.id })).toHaveLength(2);
  });

  it('a validation failure is kept and replayed too', async () => {
    const doc = await createDraft(service, account);
    const key = randomUUID();
    const details = { phone: ['phone is required'] };
    await expectValidation(await addWithKey(doc.id, key, { name: 'B' }), details);
    const again = await addWithKey(doc.id, key, { name: 'B' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await expectValidation(again, details);
  });

  it('404 and 409 are not kept: a retry runs again', async () => {
    const key = randomUUID();
    const missing = '00000000-0000-4000-8000-000000000000';
    await expectError(await addWithKey(missing, key, { name: 'B', phone: PHONE_B }), 404);
    const retried = await addWithKey(missing, key, { name: 'B', phone: PHONE_B });
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    await expectError(retried, 404);

    const doc = await createDraft(service, account);
    await service.database.db('documents').where({ id: doc.id }).update({ status: 'pending' });
    const key2 = randomUUID();
    await expectError(await addWithKey(doc.id, key2, { name: 'B', phone: PHONE_B }), 409);
    await service.database.db('documents').where({ id: doc.id }).update({ status: 'draft' });
    const ok = await addWithKey(doc.id, key2, { name: 'B', phone: PHONE_B });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a server error is not kept: the retry runs again', async () => {
    const db = service.database.db;
    await db.raw(
      `CREATE FUNCTION refuse_insert() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$ LANGUAGE plpgsql`,
    );
    await db.raw(
      'CREATE TRIGGER refuse_insert BEFORE INSERT ON documents FOR EACH ROW EXECUTE FUNCTION refuse_insert()',
    );
    const key = randomUUID();
    try {
      await expectError(await createWithKey(key), 500, 'Internal server error');
    } finally {
      await db.raw('DROP TRIGGER refuse_insert ON documents');
      await db.raw('DROP FUNCTION refuse_insert()');
    }
    const retried = await createWithKey(key);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a duplicate while the first is still running is a 409', async () => {
    const doc = await createDraft(service, account);
    const key = randomUUID();
    // Hold the document's row lock so the first request waits inside its transaction.
    const trx = await service.database.db.transaction();
    await trx('documents').where({ id: doc.id }).forUpdate().first();
    const first = addWithKey(doc.id, key, { name: 'B', phone: PHONE_B });
    try {
      // Wait until the first request holds the key (it then blocks on the lock).
      let claimed = false;
      for (let i = 0; i < 2000 && !claimed; i++) {
        claimed = (await service.database.db('idempotency_keys').where({ key }).first()) !== undefined;
      }
      expect(claimed).toBe(true);
      const inFlight = await expectError(
        await addWithKey(doc.id, key, { name: 'B', phone: PHONE_B }),
        409,
        'A request with this Idempotency-Key is still in progress; retry once it has finished',
      );
      expect(inFlight.error.type).toBe('idempotency_key_in_flight');
    } finally {
      await trx.commit();
    }
    expect((await first).status).toBe(201);
    const replay = await addWithKey(doc.id, key, { name: 'B', phone: PHONE_B });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('keys belong to an account', async () => {
    const key = randomUUID();
    const other = await service.createAccount();
    expect((await createWithKey(key, 'Mine')).status).toBe(201);
    const theirs = await createWithKey(key, 'Theirs', other);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a key without the route’s scope gets 403, never the stored response, and claims nothing', async () => {
    const key = randomUUID();
    const first = await createWithKey(key, 'Scoped');
    expect(first.status).toBe(201);
    const reader = await anotherKey(account, ['documents:read']);
    const refused = await createWithKey(key, 'Scoped', reader);
    expect(refused.headers.get('idempotent-replayed')).toBeNull();
    await expectError(refused, 403, 'This API key lacks the "documents:write" scope');
    // JSON routes too: the stored approver is not replayed to a key that may not write.
    const doc = await createDraft(service, account);
    const jsonKey = randomUUID();
    expect((await addWithKey(doc.id, jsonKey, { name: 'B', phone: PHONE_B })).status).toBe(201);
    const jsonRefused = await addWithKey(doc.id, jsonKey, { name: 'B', phone: PHONE_B }, reader);
    expect(jsonRefused.headers.get('idempotent-replayed')).toBeNull();
    await expectError(jsonRefused, 403, 'This API key lacks the "documents:write" scope');
    // The scope check comes first even for a key's own record: a key that no longer has the scope (set here in
    // the table, as any future scope change would) gets 403, not the response it stored when it had it.
    const narrowed = await anotherKey(account);
    const ownKey = randomUUID();
    expect((await addWithKey(doc.id, ownKey, { name: 'C', phone: PHONE_A }, narrowed)).status).toBe(201);
    await service.database
      .db('api_keys')
      .where({ id: narrowed.apiKeyId })
      .update({ scopes: ['documents:read'] });
    const ownRefused = await addWithKey(doc.id, ownKey, { name: 'C', phone: PHONE_A }, narrowed);
    expect(ownRefused.headers.get('idempotent-replayed')).toBeNull();
    await expectError(ownRefused, 403, 'This API key lacks the "documents:write" scope');
    // The refused requests left no record of their own: one row per key, each the key that was allowed.
    const rows = await service.database
      .db('idempotency_keys')
      .whereIn('key', [key, jsonKey, ownKey])
      .orderBy('id');
    expect(rows.map((r: { api_key_id: string }) => r.api_key_id)).toEqual([
      account.apiKeyId,
      account.apiKeyId,
      narrowed.apiKeyId,
    ]);
  });

  it('a stored response belongs to the API key that made it: another key of the account runs anew', async () => {
    const key = randomUUID();
    const first = await createWithKey(key, 'Key A');
    expect(first.status).toBe(201);
    const mine = documentOf(await first.json());
    const other = await anotherKey(account);
    const documents = await countDocuments();

    const theirs = await createWithKey(key, 'Key A', other);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    const created = documentOf(await theirs.json());
    expect(created.id).not.toBe(mine.id);
    expect(await countDocuments()).toBe(documents + 1);
    // …under its own record, which it replays to itself, and a different body under it is its own 422.
    const again = await createWithKey(key, 'Key A', other);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(documentOf(await again.json())).toEqual(created);
    await expectValidation(
      await createWithKey(key, 'Something else', other),
      REUSED,
      'idempotency_key_reused',
    );
    // Key A still gets its own answer.
    const mineAgain = await createWithKey(key, 'Key A');
    expect(mineAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(documentOf(await mineAgain.json())).toEqual(mine);
  });

  it('a key is kept 24 hours; an abandoned claim is taken over after 5 minutes', async () => {
    const key = randomUUID();
    expect((await createWithKey(key, 'Old')).status).toBe(201);
    await service.database
      .db('idempotency_keys')
      .where({ key })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const fresh = await createWithKey(key, 'New body, new day');
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();

    const abandoned = randomUUID();
    await service.database.db('idempotency_keys').insert({
      account_id: account.accountId,
      api_key_id: account.apiKeyId,
      key: abandoned,
      method: 'POST',
      path: '/api/v1/documents',
      request_hash: 'x'.repeat(64),
      created_at: new Date(Date.now() - 10 * 60_000),
      expires_at: new Date(Date.now() + 3600_000),
    });
    expect((await createWithKey(abandoned)).status).toBe(201);
  });

  it('refuses a malformed key', async () => {
    const doc = await createDraft(service, account);
    for (const key of ['x'.repeat(256), 'has space', 'cl\u00e9']) {
      const res = await addWithKey(doc.id, key, { name: 'B', phone: PHONE_B });
      await expectValidation(res, {
        'Idempotency-Key': [
          'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good choice)',
        ],
      });
    }
  });
});
