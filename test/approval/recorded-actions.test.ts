import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actInDatabase } from '../../src/features/approval/act-in-database.ts';
import { actionEvidenceStore } from '../../src/features/approval/action-evidence-store.ts';
import { createApprovalClient } from '../../src/features/approval/client.ts';
import { takeAction } from '../../src/features/approval/take-action.ts';
import { createDb } from '../../src/db/knex.ts';
import { randomUUID } from 'node:crypto';
import { approvalWorkflowId, REFUSAL_MESSAGES } from '../../src/features/approval/definitions.ts';
import { delegationsStore } from '../../src/features/approval/delegations-store.ts';
import {
  createDocument,
  eventually,
  type FlowHarness,
  linkTokenOf,
  localActivities,
  pagePost,
  PHONES,
  requestFor,
  scheduledActivities,
  send,
  startFlowHarness,
  statusOf,
} from '../helpers/approval-flow.ts';

/**
 * An approver's action decided and recorded by the API in one PostgreSQL transaction under the document's row
 * lock, the run told by a signal it follows: no activity writes the action, the answer comes from the
 * transaction, and each race the database now arbitrates has one outcome both sides agree on.
 */
let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness();
});
afterAll(async () => {
  await h.close();
});

const db = () => h.service.database.db;
const approvals = () =>
  createApprovalClient({ client: h.service.temporal.client, taskQueue: h.service.config.temporal.taskQueue });

async function twoApprovers(
  workflowType: 'parallel' | 'sequential' = 'parallel',
  fields: Record<string, string> = {},
) {
  const doc = await createDocument(h, {
    workflowType,
    fields,
    approvers: [
      { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
      { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
    ],
  });
  expect((await send(h, doc.id)).status).toBe(200);
  const a = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
  const b = workflowType === 'parallel' ? linkTokenOf(await requestFor(h, PHONES.saudiB, doc.id)) : undefined;
  // The run marks an approver notified once the send has returned, after the Graph API has the request: wait for
  // the rows too, so a test's first read does not fall between the two.
  const notified = workflowType === 'parallel' ? 2 : 1;
  await eventually(
    async () =>
      (await db()('approvers').where({ document_id: doc.id, status: 'notified' })).length === notified,
    60_000,
  );
  return { doc, a, b };
}

async function firstApproverId(documentId: string): Promise<string> {
  const row = (await db()('approvers').where({ document_id: documentId, order_index: 1 }).first()) as {
    id: string;
  };
  return row.id;
}

async function signalsOf(documentId: string): Promise<{ sent_at: Date | null }[]> {
  return db()('approval_signals').where({ document_id: documentId }).orderBy('created_at');
}

async function workflowView(documentId: string) {
  const handle = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(documentId));
  return handle.query<{ status: string; approvers: { id: string; state: string }[] }>('status');
}

describe('actions recorded by the API, followed by the run', () => {
  it('writes the action in the answer’s transaction and signals the run; no activity writes it', async () => {
    const { doc, a, b } = await twoApprovers();
    expect(await db()('approval_run_protocols').where({ document_id: doc.id }).first()).toMatchObject({
      protocol: 'signal',
    });
    const first = await pagePost(h, a, 'complete', {});
    expect(first.status).toBe(200);
    expect(((await first.json()) as { data: unknown }).data).toEqual({
      status: 'in_progress',
      completed: 1,
      total: 2,
    });
    // Written before the answer: the next read sees it without waiting for Temporal.
    const now = await statusOf(h, doc.id);
    expect(now.status).toBe('in_progress');
    expect(now.approvers.map((x) => x.status).sort()).toEqual(['completed', 'notified']);
    expect((await pagePost(h, b!, 'complete', {})).status).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);

    const signals = await signalsOf(doc.id);
    expect(signals).toHaveLength(2);
    expect(signals.every((s) => s.sent_at !== null)).toBe(true);
    // Approved in the read model by the finalization, a local activity: its marker is in the history once the
    // workflow task it ran in completes, with the run.
    const run = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id));
    await run.result();
    const history = await run.fetchHistory();
    const signalled = (history.events ?? []).filter(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'actionRecorded',
    );
    expect(signalled).toHaveLength(2);
    const ran = [
      ...(await scheduledActivities(h, doc.id)),
      ...(await localActivities(h, doc.id)).map((l) => l.name),
    ];
    for (const writer of ['recordApproverAction', 'recordActionAndNotify', 'recordActionAndFinalize'])
      expect(ran).not.toContain(writer);
    expect(ran).toContain('finalizeAndSendSignedCopies');
  });

  it('refuses out of turn (409), after acting (410), and an unknown link (404) from the read model', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const a = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    const bRow = (await db()('approvers').where({ document_id: doc.id, order_index: 2 }).first()) as {
      id: string;
    };
    const evidenceId = randomUUID();
    const evidence = { at: new Date().toISOString(), channel: 'page' } as const;
    const deps = { ...h.service.deps, approvals: approvals() };
    await expect(
      actInDatabase(deps, doc.id, { approverId: bRow.id, kind: 'complete', evidenceId, evidence }),
    ).rejects.toMatchObject({ refusal: 'not_your_turn' });
    expect((await pagePost(h, a, 'complete', {})).status).toBe(200);
    expect((await pagePost(h, a, 'complete', {})).status).toBe(410);
    expect((await pagePost(h, 'x'.repeat(43), 'complete', {})).status).toBe(404);
    expect(await signalsOf(doc.id)).toHaveLength(1);
  });

  it('refuses an approver whose own delegation is still being taken with its own type and words (409)', async () => {
    const { doc, a } = await twoApprovers('parallel', { allow_delegation: 'true' });
    const approverId = await firstApproverId(doc.id);
    const delegation = await delegationsStore(db()).submit({
      documentId: doc.id,
      fromApproverId: approverId,
      delegateId: randomUUID(),
      name: 'Delegate',
      phone: '966500000099',
      reason: null,
      at: new Date(),
      ip: null,
      userAgent: null,
      verifiedBy: null,
    });
    const refused = await pagePost(h, a, 'complete', {});
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      success: false,
      error: { code: 409, type: 'delegation_pending', message: REFUSAL_MESSAGES.delegation_pending },
    });
    expect(await signalsOf(doc.id)).toHaveLength(0);
    expect(await actionEvidenceStore(db()).acceptedOn(doc.id)).toHaveLength(0);
    // Once the delegation is no longer in flight, the approver acts.
    await delegationsStore(db()).discard(delegation.id);
    expect((await pagePost(h, a, 'complete', {})).status).toBe(200);
  });
});

describe('the races the database arbitrates', () => {
  it('two taps of one approver at once: one action, one answer 200 and one 410', async () => {
    const { doc, a } = await twoApprovers();
    const answers = await Promise.all([pagePost(h, a, 'complete', {}), pagePost(h, a, 'complete', {})]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 410]);
    expect(await actionEvidenceStore(db()).acceptedOn(doc.id)).toHaveLength(1);
    expect(await signalsOf(doc.id)).toHaveLength(1);
  });

  it('two voids at once: one voids (200), the other is refused (409 document_closed)', async () => {
    const { doc } = await twoApprovers();
    const voidIt = () =>
      h.service.request(`/documents/${doc.id}/void`, { method: 'POST', account: h.account });
    const answers = await Promise.all([voidIt(), voidIt()]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const refused = answers.find((r) => r.status === 409)!;
    expect(await refused.json()).toMatchObject({
      success: false,
      error: { code: 409, type: 'document_closed' },
    });
    expect((await statusOf(h, doc.id)).status).toBe('voided');
    const voidedEvents = await db()('document_events').where({
      document_id: doc.id,
      event: 'document.voided',
    });
    expect(voidedEvents).toHaveLength(1);
    const handle = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id));
    expect(((await handle.result()) as { status: string }).status).toBe('voided');
  });

  it('the last action against a void: one wins, and the run and the read model agree', async () => {
    const { doc, a, b } = await twoApprovers();
    expect((await pagePost(h, a, 'complete', {})).status).toBe(200);
    const [action, voided] = await Promise.all([
      pagePost(h, b!, 'complete', {}),
      h.service.request(`/documents/${doc.id}/void`, { method: 'POST', account: h.account }),
    ]);
    const actionWon = action.status === 200;
    expect(actionWon ? voided.status : action.status).toBe(actionWon ? 409 : 410);
    expect(actionWon ? action.status : voided.status).toBe(200);
    const final = actionWon ? 'approved' : 'voided';
    await eventually(async () => (await statusOf(h, doc.id)).status === final, 60_000);
    const handle = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id));
    expect(((await handle.result()) as { status: string }).status).toBe(final);
  });

  it('an action at the deadline: it is refused, or it is followed and the expiry is not written', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    await db()('documents')
      .where({ id: doc.id })
      .update({ expires_at: new Date(Date.now() + 3000) });
    expect((await send(h, doc.id)).status).toBe(200);
    const a = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    const expiresAt = ((await db()('documents').where({ id: doc.id }).first()) as { expires_at: Date })
      .expires_at;
    await new Promise((resolve) => setTimeout(resolve, Math.max(expiresAt.getTime() - Date.now() - 30, 0)));
    const answer = await pagePost(h, a, 'complete', {});
    const final = answer.status === 200 ? 'approved' : 'expired';
    if (final === 'expired') expect(answer.status).toBe(410);
    const handle = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id));
    expect(((await handle.result()) as { status: string }).status).toBe(final);
    expect((await statusOf(h, doc.id)).status).toBe(final);
  });

  it('a crash between commit and signal: the relay sends the recorded action and the run follows', async () => {
    const { doc } = await twoApprovers();
    const approverId = await firstApproverId(doc.id);
    const evidenceId = randomUUID();
    const evidence = { at: new Date().toISOString(), channel: 'page', reason: 'no' } as const;
    // A process that commits and dies before its signal leaves: its signal is never sent.
    const died = {
      ...approvals(),
      follow: () => Promise.reject(new Error('the process died after commit')),
    };
    const deps = { ...h.service.deps, approvals: died };
    const outcome = await actInDatabase(deps, doc.id, { approverId, kind: 'reject', evidenceId, evidence });
    expect(outcome?.status).toBe('rejected');
    expect((await signalsOf(doc.id))[0]).toMatchObject({ sent_at: null });
    // The API server's relay sends it once it is older than its sender's grace.
    await eventually(async () => (await signalsOf(doc.id))[0]?.sent_at !== null, 20_000);
    const handle = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id));
    expect(((await handle.result()) as { status: string }).status).toBe('rejected');
    expect((await workflowView(doc.id)).approvers.find((x) => x.id === approverId)?.state).toBe('rejected');
  });
});

describe('the statements of one action', () => {
  it('reads the run’s protocol and the clock in the statement that locks the document, the approvers once and writes the evidence in one INSERT, inside the transaction', async () => {
    const { doc } = await twoApprovers();
    const approverId = await firstApproverId(doc.id);
    const evidenceId = randomUUID();
    const evidence = { at: new Date().toISOString(), channel: 'page' } as const;
    // A pool of its own, so the API server's relay and purge do not show among the action's statements.
    const counted = createDb(h.service.database.url, { poolMax: 2 });
    const statements: string[] = [];
    counted.on('query', (q: { sql: string }) => statements.push(q.sql));
    try {
      const outcome = await takeAction({ ...h.service.deps, db: counted, approvals: approvals() }, doc.id, {
        approverId,
        kind: 'complete',
        evidenceId,
        evidence,
      });
      expect(outcome.status).toBe('in_progress');
      const answered = [...statements];
      expect(answered[0]).toMatch(/^BEGIN/i);
      expect(answered.at(-1)).toMatch(/^COMMIT/i);
      const protocolReads = answered.filter((sql) => sql.includes('approval_run_protocols'));
      expect(protocolReads).toHaveLength(1);
      expect(protocolReads[0]).toMatch(/now\(\)[\s\S]*FOR NO KEY UPDATE OF d/i);
      expect(answered.filter((sql) => /^\s*select\s+now\(\)/i.test(sql))).toEqual([]);
      // The events it records carry the approvers the decision read, with the action's own row put in.
      expect(answered.filter((sql) => /from "approvers" where "document_id"/i.test(sql))).toHaveLength(1);
      // A document that does not allow delegation has no delegation in flight to look for.
      expect(answered.filter((sql) => sql.includes('approver_delegations'))).toEqual([]);
      // The evidence is written with the action, accepted, by one INSERT inside its transaction: no row stored
      // `submitted` before it and no UPDATE accepting it.
      expect(answered.filter((sql) => sql.includes('approver_action_evidence'))).toEqual([
        expect.stringMatching(/^insert into "approver_action_evidence"[\s\S]*returning/i) as string,
      ]);
      expect(await db()('approver_action_evidence').where({ id: evidenceId }).first('state')).toEqual({
        state: 'accepted',
      });
      await eventually(async () => (await signalsOf(doc.id))[0]?.sent_at !== null, 20_000);
      // Not read again for the events: each carries the approver as its own transaction left them.
      expect(await eventApprover(`approver.completed:${approverId}`, approverId)).toEqual({
        own: 'completed',
        listed: 'completed',
      });
      await eventually(
        async () => (await eventApprover(`approver.notified:${approverId}`, approverId)) !== undefined,
      );
      expect(await eventApprover(`approver.notified:${approverId}`, approverId)).toEqual({
        own: 'notified',
        listed: 'notified',
      });

      // A later action finds the document in_progress already: the row its lock read is the row its event
      // carries, so the document is neither moved nor read again.
      const second = (await db()('approvers').where({ document_id: doc.id, order_index: 2 }).first()) as {
        id: string;
      };
      const secondEvidence = randomUUID();
      const secondEvidenceContent = { at: new Date().toISOString(), channel: 'page' } as const;
      statements.length = 0;
      const last = await takeAction({ ...h.service.deps, db: counted, approvals: approvals() }, doc.id, {
        approverId: second.id,
        kind: 'complete',
        evidenceId: secondEvidence,
        evidence: secondEvidenceContent,
      });
      expect(last).toMatchObject({ completed: 2, total: 2 });
      expect(statements.filter((sql) => sql.includes('"documents"'))).toEqual([]);
      expect(
        (await db()('document_events')
          .where({ dedupe_key: `approver.completed:${second.id}` })
          .first()) as unknown,
      ).toMatchObject({
        data: { document: { status: 'in_progress' } },
      });
    } finally {
      await counted.destroy();
    }
  });
});

/** The approver's status in an event's `data.approver` and in its `data.document.approvers`. */
async function eventApprover(dedupeKey: string, approverId: string) {
  const row = (await db()('document_events').where({ dedupe_key: dedupeKey }).first()) as
    | { data: { approver: { status: string }; document: { approvers: { id: string; status: string }[] } } }
    | undefined;
  if (!row) return undefined;
  const listed = row.data.document.approvers.find((a) => a.id === approverId);
  return { own: row.data.approver.status, listed: listed?.status };
}
