import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { bulkSendWorkflowId } from '../../src/features/bulk-sends/definitions.ts';
import { eventually } from '../helpers/approval-flow.ts';
import { heartbeatTimeouts } from '../helpers/history-timeouts.ts';
import { startGraphGate, type GraphGate } from '../helpers/graph-gate.ts';
import { createTestPki } from '../helpers/pki.ts';
import { makePdf } from '../helpers/pdf.ts';
import { startRole, wathiqEnv, type RunningProcess } from '../helpers/processes.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { freePort } from '../setup/free-port.ts';
import { csvFor } from '../bulk-sends/support.ts';
import { ROLES } from '../templates/support.ts';

/**
 * A 1,000-row bulk send, end to end in real processes against the fake Graph API, with the worker killed by
 * SIGKILL mid-batch (then restarted) and the API killed by SIGKILL mid-batch (then restarted, and the creation
 * retried with its Idempotency-Key). At the end: every row sent, one document per row, one message per recipient,
 * nothing twice. The worker is killed outside a WhatsApp call (test/helpers/graph-gate.ts): a kill inside one is
 * the outbox's one known duplicate, which no design of the bulk send can remove.
 *
 * A page the killed worker held is given up when its heartbeat stops: after BULK_SEND_HEARTBEAT_SECONDS, 5 s
 * here rather than production's 30 s, so the test waits seconds for what it proves.
 */
const ROWS = 1000;
const HEARTBEAT_SECONDS = 5;
let database: TestDatabase;
let graph: FakeGraphApi;
let gate: GraphGate;
let dir: string;
let env: Record<string, string>;
let api: RunningProcess;
let worker: RunningProcess;
let baseUrl: string;
let authorization: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bulk-kill-'));
  const pki = await createTestPki(path.join(dir, 'pki'));
  [database, graph] = await Promise.all([createTestDatabase(), startFakeGraphApi()]);
  gate = await startGraphGate(graph.apiUrl);
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    ...wathiqEnv({
      databaseUrl: database.url,
      temporalAddress: inject('temporalAddress'),
      taskQueue: `faults-bulk-${randomBytes(4).toString('hex')}`,
      dataDir: path.join(dir, 'data'),
      whatsapp: { ...graph, apiUrl: gate.apiUrl, appSecret: 'app-secret' },
      signing: pki,
    }),
    PORT: String(port),
    PUBLIC_BASE_URL: baseUrl,
    BULK_SEND_PAGE_SIZE: '50',
    BULK_SEND_PAGES_PER_RUN: '4',
    BULK_SEND_CONCURRENCY: '6',
    WHATSAPP_TIER_RECIPIENTS_PER_DAY: '100000',
    WHATSAPP_THROUGHPUT_MPS: '1000',
    BULK_SEND_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
  };
  [worker, api] = await Promise.all([startRole('worker', env, { name: 'worker 1' }), startRole('api', env)]);
  const account = await accountsStore(database.db).create({
    name: 'Bulk Co',
    email: `bulk-${randomBytes(6).toString('hex')}@example.test`,
    passwordHash: await hashPassword('correct horse battery staple'),
    plan: 'enterprise',
  });
  const key = await issueApiKey(database.db, { accountId: account.id, name: 'bulk' });
  authorization = `Bearer ${key.apiKey.key}:${key.secret}`;
});

afterAll(async () => {
  await Promise.all([api?.kill('SIGTERM'), worker?.kill('SIGTERM')]);
  await gate?.stop();
  await graph?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

const call = (pathname: string, init: RequestInit = {}) =>
  fetch(`${baseUrl}/api/v1${pathname}`, { ...init, headers: { authorization, ...(init.headers ?? {}) } });

const rowStatuses = async (bulkSendId: string) =>
  Object.fromEntries(
    (
      await database
        .db('bulk_send_rows')
        .where({ bulk_send_id: bulkSendId })
        .groupBy('status')
        .select('status', database.db.raw('count(*)::int AS n'))
    ).map((r: { status: string; n: number }) => [r.status, r.n]),
  ) as Record<string, number>;

describe('a 1,000-row bulk send with the worker and the API killed mid-batch', () => {
  it('sends every row once: no duplicate document, no duplicate message', async () => {
    const form = new FormData();
    form.append('title', 'Contract amendment');
    form.append('roles', JSON.stringify(ROLES));
    form.append('file', new Blob([await makePdf(1)], { type: 'application/pdf' }), 'amendment.pdf');
    const made = await call('/templates', { method: 'POST', body: form });
    expect(made.status, await made.clone().text()).toBe(201);
    const templateId = ((await made.json()) as { data: { id: string } }).data.id;

    const csv = csvFor(ROWS, 200_000);
    const idempotencyKey = randomBytes(16).toString('hex');
    const postBulk = () => {
      const body = new FormData();
      body.append('file', new Blob([csv], { type: 'text/csv' }), 'employees.csv');
      return call(`/templates/${templateId}/bulk-sends`, {
        method: 'POST',
        body,
        headers: { 'idempotency-key': idempotencyKey },
      });
    };
    const created = await postBulk();
    expect(created.status, await created.clone().text()).toBe(201);
    const bulkSendId = ((await created.json()) as { data: { id: string } }).data.id;

    // Mid-batch: close the door to Meta, let every answer already given be recorded, then SIGKILL the worker.
    await eventually(async () => ((await rowStatuses(bulkSendId)).sent ?? 0) >= 150, 180_000);
    gate.close();
    await eventually(async () => {
      const sending = await database
        .db('whatsapp_messages')
        .where({ status: 'sending' })
        .count<{ n: string }[]>({ n: '*' });
      return gate.inFlight() === 0 && Number(sending[0]!.n) === gate.held();
    }, 30_000);
    expect(await worker.kill('SIGKILL')).toBe('SIGKILL');
    const atKill = await rowStatuses(bulkSendId);
    expect(atKill.pending ?? 0).toBeGreaterThan(0);
    gate.dropHeldAndOpen();
    worker = await startRole('worker', env, { name: 'worker 2' });

    // Mid-batch again: SIGKILL the API, restart it, and retry the creation with the same Idempotency-Key.
    await eventually(async () => ((await rowStatuses(bulkSendId)).sent ?? 0) >= 500, 240_000);
    expect(await api.kill('SIGKILL')).toBe('SIGKILL');
    api = await startRole('api', env);
    const retried = await postBulk();
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(((await retried.json()) as { data: { id: string } }).data.id).toBe(bulkSendId);

    const done = await eventually(async () => {
      const res = await call(`/bulk-sends/${bulkSendId}`);
      const body = (await res.json()) as { data: { status: string; counts: Record<string, number> } };
      return body.data.status === 'completed' ? body.data : undefined;
    }, 420_000);
    expect(done.counts).toMatchObject({ rows: ROWS, created: ROWS, sent: ROWS, failed: 0 });

    // One bulk send, one document per row, none beside them.
    expect(await database.db('bulk_sends').count<{ n: string }[]>({ n: '*' })).toEqual([{ n: 1 }]);
    const documents = await database.db('documents').where({ template_id: templateId }).pluck('id');
    expect(documents).toHaveLength(ROWS);
    const rowDocuments = await database
      .db('bulk_send_rows')
      .where({ bulk_send_id: bulkSendId })
      .pluck('document_id');
    expect(new Set(rowDocuments)).toEqual(new Set(documents));

    // One message per employee (sequential: the first position is notified at send), none twice.
    await eventually(
      () =>
        new Set(graph.requests.filter((r) => r.wamid).map((r) => (r.body as { to: string }).to)).size >= ROWS,
      240_000,
    );
    const perRecipient = new Map<string, number>();
    for (const r of graph.requests) {
      const to = (r.body as { to?: string } | undefined)?.to;
      if (to) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
    }
    expect([...perRecipient].filter(([, n]) => n > 1)).toEqual([]);
    expect(perRecipient.size).toBe(ROWS);

    // Every page, in whichever run (one per BULK_SEND_PAGES_PER_RUN pages), was scheduled with the configured
    // heartbeat time-out: a page the killed worker held is given up after it.
    const timeouts = await heartbeatTimeouts(inject('temporalAddress'), [bulkSendWorkflowId(bulkSendId)], {
      allRuns: true,
    });
    expect(timeouts.runs).toBeGreaterThan(1);
    expect(timeouts.scheduledWith).toEqual([HEARTBEAT_SECONDS]);
  }, 900_000);
});
