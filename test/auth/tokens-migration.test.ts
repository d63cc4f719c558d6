import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { sha256Hex } from '../../src/auth/tokens.ts';
import { migrateDown, migrateLatest } from '../../src/db/migrate.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { approversStore, openLinkToken } from '../../src/features/documents/approvers-store.ts';
import { documentEventsStore, fullEventData } from '../../src/features/events/document-events-store.ts';
import { documentsStore, openFinalToken } from '../../src/features/documents/documents-store.ts';
import { idempotencyStore, openResponse } from '../../src/db/stores/idempotency-store.ts';
import { verificationsStore } from '../../src/features/approval/verifications-store.ts';
import {
  openDeliveryBody,
  webhookDeliveriesStore,
} from '../../src/features/webhooks/webhook-deliveries-store.ts';
import { webhooksStore } from '../../src/features/webhooks/webhooks-store.ts';
import { openPayload, whatsAppMessagesStore } from '../../src/db/stores/whatsapp-messages-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { startTestService } from '../helpers/test-service.ts';

/**
 * Migrations 030-032 on a database that already holds plain tokens and secrets (as every deployment before them
 * did): each is hashed and sealed, nothing plain is left, and the links already handed out keep working.
 */

const key = { id: 'k1', key: randomBytes(32) };
const box = createSecretBox([key]);
const ENCRYPTION_KEYS = `k1:${key.key.toString('base64')}`;
const LATEST = ['032-sealed-messages', '031-sealed-webhooks', '030-tokens-at-rest'];
const token = () => randomBytes(32).toString('base64url');

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  for (const name of LATEST) await migrateDown(database.db, { secrets: box }, name);
});
afterAll(() => database.drop());

/** What a deployment before migration 030 stored, in the columns of the time. */
async function seedPlainRows() {
  const db = database.db;
  const account = await accountsStore(db).create({
    name: 'Old Account',
    email: `${randomUUID()}@example.com`,
    passwordHash: 'x',
    plan: 'business',
  });
  const apiKey = await issueApiKey(db, { accountId: account.id, name: 'old key' });
  const plain = {
    link: token(),
    file: token(),
    verification: randomBytes(16).toString('base64url'),
    secret: `whsec_${token()}`,
  };
  const document = (status: string, reference: string) => ({
    id: randomUUID(),
    account_id: account.id,
    reference,
    title_ar: 'عقد',
    title_en: 'Contract',
    status,
    expires_at: new Date(Date.now() + 86_400_000),
    file_key: `documents/${account.id}/original.pdf`,
    file_sha256: 'a'.repeat(64),
    file_size: 10,
    page_count: 1,
  });
  const open = document('pending', 'WQT-2026-000001');
  const approved = {
    ...document('approved', 'WQT-2026-000002'),
    final_token: plain.file,
    final_file_key: `documents/${account.id}/final.pdf`,
    final_sha256: 'b'.repeat(64),
  };
  await db('documents').insert([open, approved]);
  const approver = (documentId: string, status: string, linkToken: string | null) => ({
    id: randomUUID(),
    document_id: documentId,
    account_id: account.id,
    name_ar: 'سارة',
    name_en: 'Sara',
    phone: '966501234567',
    action_type: 'approve_only',
    order_index: 1,
    status,
    link_token: linkToken,
    ...(status === 'completed' && { acted_at: new Date(), action_channel: 'page' }),
  });
  const waiting = approver(open.id, 'notified', plain.link);
  await db('approvers').insert([waiting, approver(approved.id, 'completed', token())]);
  await db('document_verifications').insert({
    document_id: approved.id,
    token: plain.verification,
    token_sha256: sha256Hex(plain.verification),
  });
  const webhookId = randomUUID();
  await db('webhooks').insert({
    id: webhookId,
    account_id: account.id,
    url: 'https://hooks.example.com/',
    events: ['document.approved'],
    secret: plain.secret,
  });
  const urls = {
    download_url: `https://wathiq.example/files/${plain.file}/WQT-2026-000002.pdf`,
    verification_url: `https://wathiq.example/v/${plain.verification}`,
  };
  const data = {
    document: { id: approved.id, status: 'approved', ...urls, filename: 'WQT-2026-000002.pdf' },
  };
  const [event] = await db('document_events')
    .insert({
      account_id: account.id,
      document_id: approved.id,
      event: 'document.approved',
      sequence: 1,
      data,
      dedupe_key: `document.approved:${approved.id}`,
    })
    .returning<{ id: number }[]>('id');
  const body = JSON.stringify({ id: 1, event: 'document.approved', data });
  const [delivery] = await db('webhook_deliveries')
    .insert({
      webhook_id: webhookId,
      account_id: account.id,
      event_id: event!.id,
      event: 'document.approved',
      body,
    })
    .returning<{ id: number }[]>('id');
  const outbound = { preview: { buttons: [{ type: 'url', suffix: plain.link }] }, link_token: plain.link };
  const inbound = { payload: `approve:${plain.link}`, source: 'button' };
  await db('whatsapp_messages').insert([
    {
      direction: 'out',
      phone: waiting.phone,
      kind: 'approval_request',
      payload: outbound,
      idempotency_key: 'k:1',
    },
    { direction: 'in', wamid: 'wamid.in.1', phone: waiting.phone, kind: 'button_reply', payload: inbound },
  ]);
  const response = { success: true, data: { id: webhookId, secret: plain.secret } };
  const [idem] = await db('idempotency_keys')
    .insert({
      account_id: account.id,
      api_key_id: apiKey.apiKey.id,
      key: 'create-hook',
      method: 'POST',
      path: '/api/v1/webhooks',
      request_hash: 'c'.repeat(64),
      response_status: 201,
      response_body: response,
      expires_at: new Date(Date.now() + 86_400_000),
    })
    .returning<{ id: number }[]>('id');
  return {
    plain,
    open,
    approved,
    waiting,
    webhookId,
    data,
    body,
    deliveryId: delivery!.id,
    outbound,
    inbound,
    response,
    idemId: idem!.id,
    apiKeyId: apiKey.apiKey.id,
  };
}

describe('migrations 030-032 on stored tokens and secrets', () => {
  it('refuse to run without the keys, then hash and seal everything, and old links keep working', async () => {
    const db = database.db;
    const seeded = await seedPlainRows();
    const { plain } = seeded;

    await expect(migrateLatest(db)).rejects.toThrow(/needs the encryption keys/);
    // Nothing half-done: the plain column is still there, with its token (the migration's transaction rolled back).
    expect(await db('approvers').where({ id: seeded.waiting.id }).first('link_token')).toEqual({
      link_token: plain.link,
    });

    expect(await migrateLatest(db, { secrets: box })).toEqual(LATEST.toReversed());
    for (const [table, column] of [
      ['approvers', 'link_token'],
      ['documents', 'final_token'],
      ['document_verifications', 'token'],
      ['webhooks', 'secret'],
      ['webhook_deliveries', 'body'],
      ['whatsapp_messages', 'payload'],
      ['idempotency_keys', 'response_body'],
    ] as const) {
      expect(await db.schema.hasColumn(table, column), `${table}.${column}`).toBe(false);
    }

    // Found by digest, read back from the sealed copy.
    const approver = (await approversStore(db).findByLinkToken(plain.link))!;
    expect(approver.id).toBe(seeded.waiting.id);
    expect(openLinkToken(approver, box)).toBe(plain.link);
    const final = (await documentsStore(db).findByFinalToken(plain.file))!;
    expect(openFinalToken(final, box)).toBe(plain.file);
    expect(await verificationsStore(db).findDocumentId(plain.verification)).toBe(seeded.approved.id);
    expect(await verificationsStore(db).tokenOf(seeded.approved.id, box)).toBe(plain.verification);
    expect((await webhooksStore(db).findWithSecret(seeded.webhookId, box))!.secret).toBe(plain.secret);
    expect(openDeliveryBody((await webhookDeliveriesStore(db).load(seeded.deliveryId))!, box)).toBe(
      seeded.body,
    );
    const event = (await documentEventsStore(db).findByDedupeKey(`document.approved:${seeded.approved.id}`))!;
    expect(event.data.document).not.toHaveProperty('download_url');
    expect(fullEventData(event, box)).toEqual(seeded.data);
    const messages = whatsAppMessagesStore(db);
    expect(openPayload((await messages.findByIdempotencyKey('k:1'))!, box)).toEqual(seeded.outbound);
    expect(openPayload((await messages.findByWamid('wamid.in.1'))!, box)).toEqual(seeded.inbound);
    const idem = (await idempotencyStore(db).find(seeded.apiKeyId, 'create-hook'))!;
    expect(openResponse(idem, box)).toEqual(seeded.response);

    // The links sent before the migration, on the running service.
    const service = await startTestService({ database, worker: false, env: { ENCRYPTION_KEYS } });
    try {
      await service.deps.storage.put(
        seeded.approved.final_file_key,
        Readable.from([Buffer.from('%PDF-1.7\n')]),
        {
          contentType: 'application/pdf',
        },
      );
      expect((await fetch(`${service.api.url}/a/${plain.link}`)).status).toBe(200);
      expect((await fetch(`${service.api.url}/files/${plain.file}/WQT-2026-000002.pdf`)).status).toBe(200);
      expect((await fetch(`${service.api.url}/v/${plain.verification}`)).status).toBe(200);
    } finally {
      await service.close();
    }

    // And back: the down migrations open every sealed value into its plain column again.
    for (const name of LATEST) await migrateDown(db, { secrets: box }, name);
    expect(await db('approvers').where({ id: seeded.waiting.id }).first('link_token')).toEqual({
      link_token: plain.link,
    });
    expect(await db('webhooks').where({ id: seeded.webhookId }).first('secret')).toEqual({
      secret: plain.secret,
    });
    expect(
      (await db('document_events').where({ id: event.id }).first<{ data: unknown }>('data')).data,
    ).toEqual(seeded.data);
    await migrateLatest(db, { secrets: box });
  }, 120_000);
});
