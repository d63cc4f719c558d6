import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Knex } from '../../src/db/knex.ts';
import { uncachedApiKeyLookup } from '../../src/features/accounts/api-key-cache.ts';
import { startApiServer, type RunningApi } from '../../src/runtime/api-server.ts';
import { createTemporalClient, type TemporalClientHandle } from '../../src/temporal/client.ts';
import { documentForm } from '../helpers/multipart.ts';
import { makePdf } from '../helpers/pdf.ts';
import { startTcpGate, type TcpGate } from '../helpers/tcp-gate.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

/**
 * The create and send path when PostgreSQL or Temporal cannot keep up: the answer is 503 `service_unavailable`
 * with Retry-After, never a 500, and nothing of the refused request stays behind. Provoked for real: an API
 * whose pool has one connection, held by a transaction; and an API that reaches Temporal through a TCP gate that
 * stops answering.
 */

type Envelope = { success: false; error: { code: number; type: string; message: string } };

let service: TestService;
let account: TestAccount;
let pdf: Buffer;
beforeAll(async () => {
  service = await startTestService({ worker: false });
  account = await service.createAccount();
  pdf = await makePdf(1, 'Load');
});
afterAll(() => service.close());

const form = (title: string) =>
  documentForm(
    { title, workflow_type: 'parallel' },
    { approvers: [{ name: 'Load', phone: '966531239901', action_type: 'approve_only' }], file: pdf },
  );

const post = (api: RunningApi, path: string, init: { body?: FormData; headers?: Record<string, string> }) =>
  fetch(`${api.url}/api/v1${path}`, {
    method: 'POST',
    body: init.body,
    headers: { authorization: account.authorization, ...init.headers },
  });

async function expectUnavailable(res: Response, message: RegExp): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(503);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  const body = JSON.parse(text) as Envelope;
  expect(body.error).toMatchObject({ code: 503, type: 'service_unavailable' });
  expect(body.error.message).toMatch(message);
  expect(text).not.toMatch(/knex|timeout acquiring|stack|DEADLINE|grpc/i);
}

const documentsOf = async (title: string) =>
  service.database
    .db('documents')
    .where({ account_id: account.accountId })
    .andWhere((q) => {
      void q.where({ title_en: title }).orWhere({ title_ar: title });
    })
    .select('id');

describe('POST /documents on a pool whose only connection is held', () => {
  let db: Knex;
  let api: RunningApi;
  beforeAll(async () => {
    db = createDb(service.database.url, { poolMax: 1 });
    // API keys are looked up on the service's own pool, so the request gets past authentication and meets the
    // held pool in the create itself.
    const apiKeys = uncachedApiKeyLookup(service.database.db);
    api = await startApiServer({ ...service.deps, db, apiKeys }, '127.0.0.1', 0);
  });

  async function whileHeld<T>(run: () => Promise<T>): Promise<T> {
    const held = await db.transaction();
    try {
      await held.raw('select 1');
      return await run();
    } finally {
      await held.rollback();
    }
  }
  afterAll(async () => {
    await api.stop();
    await db.destroy();
  });

  it('answers 503 with Retry-After once the pool gives up, writes no document, and the same key then creates one', async () => {
    const refused = await whileHeld(() =>
      post(api, '/documents', { body: form('Pool held'), headers: { 'idempotency-key': 'pool-held-1' } }),
    );
    await expectUnavailable(refused, /database/);
    expect(await documentsOf('Pool held')).toEqual([]);

    // The key was given back: the client's retry with it creates the document, once.
    const retried = await post(api, '/documents', {
      body: form('Pool held'),
      headers: { 'idempotency-key': 'pool-held-1' },
    });
    expect(retried.status, await retried.clone().text()).toBe(201);
    expect(await documentsOf('Pool held')).toHaveLength(1);
  }, 60_000);

  it('answers 503 when the draft’s own transaction cannot get a connection, and leaves no row behind', async () => {
    const refused = await whileHeld(() => post(api, '/documents', { body: form('Pool held, no key') }));
    await expectUnavailable(refused, /database/);
    expect(await documentsOf('Pool held, no key')).toEqual([]);
    const events = await service.database
      .db('document_events')
      .where({ account_id: account.accountId, event: 'document.created' })
      .count<{ n: string }[]>('* as n');
    // Only the first test's document was created.
    expect(Number(events[0]!.n)).toBe(1);
  }, 60_000);
});

describe('POST /documents/{id}/send with Temporal not answering', () => {
  let gate: TcpGate;
  let temporal: TemporalClientHandle;
  let api: RunningApi;
  beforeAll(async () => {
    gate = await startTcpGate(inject('temporalAddress'));
    temporal = createTemporalClient({ address: gate.address, namespace: service.config.temporal.namespace });
    api = await startApiServer(
      { ...service.deps, temporal, config: { ...service.config, approvalAnswerTimeoutMs: 1_500 } },
      '127.0.0.1',
      0,
    );
  });
  afterAll(async () => {
    await api.stop();
    await temporal.close();
    await gate.close();
  });

  it('answers 503 with Retry-After and leaves the document a draft', async () => {
    const created = await post(api, '/documents', { body: form('Temporal held') });
    expect(created.status, await created.clone().text()).toBe(201);
    const { data } = (await created.json()) as { data: { id: string } };
    gate.hold();
    try {
      await expectUnavailable(await post(api, `/documents/${data.id}/send`, {}), /approval service/);
    } finally {
      gate.forward();
    }
    const row = await service.database
      .db('documents')
      .where({ id: data.id })
      .first<{ status: string }>('status');
    expect(row?.status).toBe('draft');
    const sent = await service.database
      .db('document_events')
      .where({ document_id: data.id, event: 'document.sent' });
    expect(sent).toEqual([]);
  }, 60_000);
});
