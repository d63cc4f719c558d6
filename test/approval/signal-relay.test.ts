import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { actInDatabase } from '../../src/features/approval/act-in-database.ts';
import {
  approvalSignalsStore,
  type SignalRow as StoredSignal,
} from '../../src/features/approval/approval-signals-store.ts';
import { createApprovalClient } from '../../src/features/approval/client.ts';
import { approvalWorkflowId } from '../../src/features/approval/definitions.ts';
import { registerApprovalSignalsGauges } from '../../src/metrics/approval-signals-gauge.ts';
import { startApiServer } from '../../src/runtime/api-server.ts';
import { createTemporalClient, type TemporalClientHandle } from '../../src/temporal/client.ts';
import {
  createDocument,
  eventually,
  type FlowHarness,
  linkTokenOf,
  PHONES,
  requestFor,
  send,
  startFlowHarness,
  statusOf,
} from '../helpers/approval-flow.ts';
import { startTcpGate, type TcpGate } from '../helpers/tcp-gate.ts';

/**
 * The relay of approval signals, as the API server runs it, against a Temporal that does not answer: it holds no
 * transaction, row lock or pool connection while a call waits out its deadline, stops its pass at the first such
 * call, and sends every row once Temporal answers again. The API server here reaches Temporal through a gate
 * (test/helpers/tcp-gate.ts) that can hold connections unanswered.
 */
let h: FlowHarness;
let gate: TcpGate;
let temporal: TemporalClientHandle;
const ANSWER_TIMEOUT_MS = 1_500;

beforeAll(async () => {
  h = await startFlowHarness();
  gate = await startTcpGate(inject('temporalAddress'));
  temporal = createTemporalClient({ address: gate.address, namespace: h.service.config.temporal.namespace });
  // The harness's API server (and its relay) gives way to one that reaches Temporal through the gate.
  await h.service.api.stop();
  h.service.api = await startApiServer(
    {
      ...h.service.deps,
      temporal,
      config: { ...h.service.config, approvalAnswerTimeoutMs: ANSWER_TIMEOUT_MS },
    },
    '127.0.0.1',
    0,
  );
  h.service.baseUrl = `${h.service.api.url}/api/v1`;
});
afterAll(async () => {
  await h.close();
  await temporal.close();
  await gate.close();
});

const db = () => h.service.database.db;

type SignalRow = Pick<
  StoredSignal,
  'id' | 'sent_at' | 'leased_until' | 'attempts' | 'last_error' | 'dead_at' | 'dead_reason'
>;
const signalsOf = (documentId: string): Promise<SignalRow[]> =>
  db()('approval_signals').where({ document_id: documentId }).orderBy('created_at');

/** A document sent to two approvers at once, each with their approval request. */
async function sentToTwo() {
  const doc = await createDocument(h, {
    workflowType: 'parallel',
    approvers: [
      { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
      { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
    ],
  });
  const sent = await send(h, doc.id);
  expect(sent.status, await sent.clone().text()).toBe(200);
  linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
  linkTokenOf(await requestFor(h, PHONES.saudiB, doc.id));
  const approvers = (await db()('approvers').where({ document_id: doc.id }).orderBy('order_index')) as {
    id: string;
  }[];
  return { doc, approvers };
}

/** Both approvers' actions recorded by a process that dies before signalling: only the relay can send them. */
async function recordUnsignalled(documentId: string, approverIds: string[]): Promise<void> {
  const approvals = createApprovalClient({
    client: h.service.temporal.client,
    taskQueue: h.service.config.temporal.taskQueue,
  });
  const died = { ...approvals, follow: () => Promise.reject(new Error('the process died after commit')) };
  for (const approverId of approverIds) {
    const evidenceId = randomUUID();
    const evidence = { at: new Date().toISOString(), channel: 'page' } as const;
    await actInDatabase({ ...h.service.deps, approvals: died }, documentId, {
      approverId,
      kind: 'complete',
      evidenceId,
      evidence,
    });
  }
}

/** Each of `ids` locked at once with NOWAIT by another transaction: it fails if anyone holds one of them. */
async function lockableNow(table: string, ids: string[]): Promise<void> {
  await db().transaction(async (trx) => {
    await trx.raw(`SELECT id FROM ${table} WHERE id = ANY(?) FOR UPDATE NOWAIT`, [ids]);
  });
}

async function idleInTransaction(): Promise<number> {
  const { rows } = await db().raw<{ rows: { n: string }[] }>(
    `SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
  );
  return Number(rows[0]!.n);
}

describe('the approval signal relay while Temporal does not answer', () => {
  it('holds no lock or transaction while a call waits, stops at the first, and sends all once Temporal answers', async () => {
    const { doc, approvers } = await sentToTwo();
    gate.hold();
    await recordUnsignalled(
      doc.id,
      approvers.map((a) => a.id),
    );
    const [first, second] = (await signalsOf(doc.id)).map((s) => s.id) as [string, string];

    // The relay claimed the oldest row and its call is waiting for Temporal: the row is leased, not locked.
    await eventually(async () => {
      const row = (await signalsOf(doc.id))[0]!;
      return row.leased_until !== null && row.leased_until > new Date() && gate.held() > 0;
    }, 15_000);
    await lockableNow('approval_signals', [first, second]);
    await lockableNow('documents', [doc.id]);
    expect(await idleInTransaction()).toBe(0);

    // Each pass stops at the call that timed out: the newer row is never tried while Temporal is silent.
    await eventually(async () => (await signalsOf(doc.id))[0]!.attempts >= 2, 15_000);
    const [tried, waiting] = await signalsOf(doc.id);
    expect(tried).toMatchObject({ sent_at: null, dead_at: null });
    expect(tried!.last_error).toMatch(
      /The approval service (did not answer in time|could not take this just now)/,
    );
    expect(waiting).toMatchObject({ sent_at: null, attempts: 0 });

    // What an operator sees meanwhile.
    const registry = new Registry();
    registerApprovalSignalsGauges(registry, {
      read: () => approvalSignalsStore(db()).backlog(),
      cacheMs: 0,
      onError: (err) => {
        throw err;
      },
    });
    const scraped = await registry.metrics();
    expect(Number(/^wathiq_approval_signals_unsent (\d+)$/m.exec(scraped)?.[1])).toBeGreaterThanOrEqual(2);
    expect(
      Number(/^wathiq_approval_signals_unsent_oldest_seconds ([\d.]+)$/m.exec(scraped)?.[1]),
    ).toBeGreaterThan(2);

    gate.forward();
    await eventually(async () => (await signalsOf(doc.id)).every((s) => s.sent_at !== null), 30_000);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);
    const handle = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id));
    expect(((await handle.result()) as { status: string }).status).toBe('approved');
  });

  it('gives up a signal whose run does not exist: marked dead with the reason, out of the unsent backlog', async () => {
    const { doc, approvers } = await sentToTwo();
    const [row] = await db()('approval_signals')
      .insert({
        document_id: doc.id,
        workflow_id: `approval-no-such-run-${doc.id}`,
        signal: 'actionRecorded',
        payload: { approverId: approvers[0]!.id, kind: 'complete', evidenceId: doc.id },
        created_at: db().raw(`now() - interval '10 seconds'`),
      })
      .returning<Pick<SignalRow, 'id'>[]>('id');
    const dead = await eventually(async () => {
      const r = await db()<SignalRow>('approval_signals').where({ id: row!.id }).first();
      return r?.dead_at && r;
    }, 20_000);
    expect(dead).toMatchObject({ dead_reason: 'workflow_closed', sent_at: null });
    const backlog = await approvalSignalsStore(db()).backlog();
    expect(backlog.dead).toBeGreaterThanOrEqual(1);
    expect(backlog.unsent).toBe(0);
  });
});

describe('claiming unsent signals', () => {
  it('two relays claiming at once never take the same row', async () => {
    const { doc, approvers } = await sentToTwo();
    const rows = Array.from({ length: 40 }, () => ({
      document_id: doc.id,
      workflow_id: approvalWorkflowId(doc.id),
      signal: 'actionRecorded',
      payload: { approverId: approvers[0]!.id, kind: 'complete', evidenceId: doc.id },
      // Too young for the API server's relay (2 s grace); these claims ask for younger rows.
      created_at: db().raw(`now() - interval '1 second'`),
    }));
    await db()('approval_signals').insert(rows);
    const claim = () =>
      approvalSignalsStore(db()).claimUnsent({ olderThanMs: 500, leaseMs: 60_000, limit: 25 });
    const [a, b] = await Promise.all([claim(), claim()]);
    const ids = [...a, ...b].map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(40);
    // Leased: a third claim finds nothing until the leases pass.
    expect(await claim()).toEqual([]);
    await db()('approval_signals').where({ document_id: doc.id }).del();
  });
});
