import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type RunningApi } from '../../src/runtime/api-server.ts';
import { createTemporalClient, type TemporalClientHandle } from '../../src/temporal/client.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  PHONES,
  requestFor,
  send,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * A delegation whose answer from the workflow was lost: the request row is settled by
 * the next delegation it concerns, so its number is not blocked for good and the approver who retries hears what
 * became of it. The lost answer is real: the same request through a second API on the same database whose
 * Temporal address nothing listens on. Time is moved by editing the row's `created_at`, never by waiting.
 */
let h: FlowHarness;
let cut: { api: RunningApi; temporal: TemporalClientHandle };

interface Envelope {
  success: boolean;
  data?: Record<string, unknown>;
  error?: { code: number; message: string; details: Record<string, string[]> };
}

interface DelegationRow {
  id: string;
  from_approver_id: string;
  delegate_id: string;
  phone: string;
  state: string;
  settled_at: Date | null;
}

const REASON = 'Travelling; my deputy signs this week';

async function delegate(baseUrl: string, token: string, name: string, phone: string) {
  const res = await fetch(`${baseUrl}/a/${token}/delegate?lang=en`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, phone, reason: REASON }),
  });
  return { status: res.status, body: (await res.json()) as Envelope };
}

const rowsOf = (documentId: string) =>
  h.service.database
    .db('approver_delegations')
    .where({ document_id: documentId })
    .orderBy('created_at')
    .select<DelegationRow[]>('id', 'from_approver_id', 'delegate_id', 'phone', 'state', 'settled_at');

const UNCONFIRMED = /saved, but the approval service did not confirm it/;

beforeAll(async () => {
  // Both APIs give up on the workflow's answer after 3 s (APPROVAL_ANSWER_TIMEOUT_SECONDS), not the default 20 s.
  h = await startFlowHarness({ env: { APPROVAL_ANSWER_TIMEOUT_SECONDS: '3' } });
  const temporal = createTemporalClient({
    address: `127.0.0.1:${await freePort()}`,
    namespace: h.service.config.temporal.namespace,
  });
  const api = await startApiServer({ ...h.service.deps, temporal }, '127.0.0.1', 0);
  cut = { api, temporal };
}, 60_000);
afterAll(async () => {
  await cut?.api.stop();
  await cut?.temporal.close();
  await h?.close();
});

describe('a delegation whose answer was lost', () => {
  it('is taken when the approver sends it again: the number is not blocked, one delegate row', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'Lost Answer', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'Second Approver', phone: PHONES.uk, action_type: 'approve_only' },
      ],
      fields: { allow_delegation: 'true' },
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const token = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));

    const lost = await delegate(cut.api.url, token, 'Deputy One', `+${PHONES.saudiC}`);
    expect(lost.status, JSON.stringify(lost.body)).toBe(503);
    expect(lost.body.error!.message).toMatch(UNCONFIRMED);
    const [left] = await rowsOf(doc.id);
    expect(left).toMatchObject({ state: 'submitted', phone: PHONES.saudiC });

    // The same delegation again: sent under the first request's id, the workflow takes it once.
    const again = await delegate(h.service.api.url, token, 'Deputy One', `+${PHONES.saudiC}`);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data).toMatchObject({ delegated: true });
    const rows = await eventually(async () => {
      const r = await rowsOf(doc.id);
      return r.every((x) => x.state === 'accepted') && r;
    }, 30_000);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.settled_at).not.toBeNull();
    const delegates = await h.service.database
      .db('approvers')
      .where({ document_id: doc.id, phone: PHONES.saudiC })
      .select<{ id: string; delegated_from_id: string }[]>('id', 'delegated_from_id');
    expect(delegates).toEqual([{ id: left!.delegate_id, delegated_from_id: left!.from_approver_id }]);
  }, 120_000);

  it('to one number, then to another: the first is settled not_taken and its number is free again', async () => {
    const doc = await parallelDocument();
    const first = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    const other = linkTokenOf(await requestFor(h, PHONES.uk, doc.id));

    const lost = await delegate(cut.api.url, first, 'Deputy One', `+${PHONES.saudiC}`);
    expect(lost.status, JSON.stringify(lost.body)).toBe(503);
    const [stale] = await rowsOf(doc.id);
    expect(stale).toMatchObject({ state: 'submitted' });

    // While that request may still be on its way, its number counts as a delegate being added.
    const early = await delegate(h.service.api.url, other, 'Deputy One', `+${PHONES.saudiC}`);
    expect(early.status, JSON.stringify(early.body)).toBe(422);
    expect(await rowsOf(doc.id)).toMatchObject([{ id: stale!.id, state: 'submitted' }]);

    // The approver, who never heard an answer, delegates to someone else: Temporal never took the first.
    const changed = await delegate(h.service.api.url, first, 'Deputy Two', `+${DEPUTY_TWO}`);
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const settled = (await rowsOf(doc.id)).find((r) => r.id === stale!.id)!;
    expect(settled.state).toBe('not_taken');
    expect(settled.settled_at).not.toBeNull();

    // Its number is free again.
    const taken = await delegate(h.service.api.url, other, 'Deputy One', `+${PHONES.saudiC}`);
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    const rows = await eventually(async () => {
      const r = await rowsOf(doc.id);
      return r.filter((x) => x.state === 'accepted').length === 2 && r;
    }, 30_000);
    expect(rows.map((r) => `${r.phone}:${r.state}`)).toEqual([
      `${PHONES.saudiC}:not_taken`,
      `${DEPUTY_TWO}:accepted`,
      `${PHONES.saudiC}:accepted`,
    ]);
    expect(await delegatesOf(doc.id)).toEqual([DEPUTY_TWO, PHONES.saudiC].sort());
  }, 120_000);

  it('left behind by one approver, it stops blocking its number for others once past the answer time-out', async () => {
    const doc = await parallelDocument();
    const first = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    const other = linkTokenOf(await requestFor(h, PHONES.uk, doc.id));
    const lost = await delegate(cut.api.url, first, 'Deputy One', `+${PHONES.saudiC}`);
    expect(lost.status, JSON.stringify(lost.body)).toBe(503);
    const [stale] = await rowsOf(doc.id);

    // Older than any request still waiting for its answer: Temporal's "unknown update" is final.
    await h.service.database
      .db('approver_delegations')
      .where({ id: stale!.id })
      .update({ created_at: new Date(Date.now() - 5 * 60_000) });
    const taken = await delegate(h.service.api.url, other, 'Deputy One', `+${PHONES.saudiC}`);
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    expect((await rowsOf(doc.id)).find((r) => r.id === stale!.id)).toMatchObject({ state: 'not_taken' });
    await eventually(async () => (await delegatesOf(doc.id)).length === 1, 30_000);
    expect(await delegatesOf(doc.id)).toEqual([PHONES.saudiC]);
  }, 120_000);

  it('that the workflow has but has not answered: 409 to a different delegation, then taken, then 410', async () => {
    const doc = await parallelDocument();
    const first = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    // No worker: Temporal takes the update in, and the workflow answers nothing until a worker is back.
    await h.service.stopWorker();
    try {
      const lost = await delegate(h.service.api.url, first, 'Deputy One', `+${PHONES.saudiC}`);
      expect(lost.status, JSON.stringify(lost.body)).toBe(503);
      expect(lost.body.error!.message).toMatch(UNCONFIRMED);
      const other = await delegate(h.service.api.url, first, 'Deputy Two', `+${DEPUTY_TWO}`);
      expect(other.status, JSON.stringify(other.body)).toBe(409);
      expect(other.body.error!.message).toBe(
        'Your delegation to Deputy One is still being recorded. Reload the page in a moment to see whether it was taken.',
      );
      expect((await rowsOf(doc.id)).map((r) => `${r.phone}:${r.state}`)).toEqual([
        `${PHONES.saudiC}:submitted`,
      ]);
    } finally {
      await h.service.startWorker();
    }
    // The workflow takes the first delegation after all; the approver's link is spent.
    await eventually(async () => (await rowsOf(doc.id))[0]?.state === 'accepted', 60_000);
    expect(await delegatesOf(doc.id)).toEqual([PHONES.saudiC]);
    const late = await delegate(h.service.api.url, first, 'Deputy Two', `+${DEPUTY_TWO}`);
    expect(late.status).toBe(410);
  }, 180_000);
});

const DEPUTY_TWO = '966507654321';

async function parallelDocument() {
  const doc = await createDocument(h, {
    workflowType: 'parallel',
    approvers: [
      { name: 'First Approver', phone: PHONES.saudiA, action_type: 'approve_only' },
      { name: 'Other Approver', phone: PHONES.uk, action_type: 'approve_only' },
    ],
    fields: { allow_delegation: 'true' },
  });
  expect((await send(h, doc.id)).status).toBe(200);
  return doc;
}

/** The phones of the document's delegates (rows with delegated_from_id), sorted. */
async function delegatesOf(documentId: string): Promise<string[]> {
  const rows = await h.service.database
    .db('approvers')
    .where({ document_id: documentId })
    .whereNotNull('delegated_from_id')
    .pluck<string[]>('phone');
  return rows.sort();
}
