import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  approvalStatusQuery,
  approvalWorkflowId,
  type ApprovalWorkflowInput,
} from '../../src/features/approval/definitions.ts';
import { createApprovalClient } from '../../src/features/approval/client.ts';
import { approversStore } from '../../src/features/documents/approvers-store.ts';
import { documentsStore } from '../../src/features/documents/documents-store.ts';
import { startApiServer } from '../../src/runtime/api-server.ts';
import { createTemporalClient } from '../../src/temporal/client.ts';
import {
  createDocument,
  eventually,
  PHONES,
  send,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * Send against approver edits and document updates: send holds the document's row lock from
 * its status check to `pending`, and starts the workflow with the approvers it read under that lock. Whatever
 * the interleaving, the workflow's approvers are the document's approvers, and an edit either landed before the
 * send (2xx) or was refused with 409 naming the status.
 */

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness();
});
afterAll(() => h.close());

interface Answer {
  status: number;
  body: { data?: Record<string, unknown>; error?: { message: string } };
  replayed: boolean;
}

async function call(
  path: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await h.service.request(path, {
    method,
    account: h.account,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: res.status,
    body: (await res.json()) as Answer['body'],
    replayed: res.headers.get('idempotent-replayed') === 'true',
  };
}

/** Starts after a random pause of up to `ms`, so the rounds cover every interleaving, not one. */
const jittered = <T>(ms: number, run: () => Promise<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    setTimeout(
      () => {
        run().then(resolve, reject);
      },
      Math.floor(Math.random() * ms),
    );
  });

interface StoredApprover {
  id: string;
  name_en: string;
  order_index: number;
  action_type: string;
}

async function stored(documentId: string) {
  const db = h.service.database.db;
  const document = await db('documents')
    .where({ id: documentId })
    .first<{ status: string; workflow_type: string; expires_at: Date; workflow_id: string | null }>();
  const approvers = await db('approvers')
    .where({ document_id: documentId })
    .orderBy('order_index')
    .select<StoredApprover[]>('id', 'name_en', 'order_index', 'action_type');
  return { document: document, approvers };
}

/** What the workflow was started with: the input recorded in its first history event. */
async function workflowInput(documentId: string): Promise<ApprovalWorkflowInput> {
  const history = await h.service.temporal.client.workflow
    .getHandle(approvalWorkflowId(documentId))
    .fetchHistory();
  const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
  return defaultPayloadConverter.fromPayload(started.input!.payloads![0]!);
}

/**
 * The workflow's approvers and the stored ones as sorted `id@order:action` keys, for one deep comparison. The
 * status query carries no action type: `withAction: false` compares ids and order only.
 */
function sameSet(
  workflow: readonly { id: string; orderIndex: number; actionType?: string }[],
  document: readonly StoredApprover[],
  withAction = true,
) {
  const key = (id: string, order: number, action: string | undefined) =>
    withAction ? `${id}@${order}:${action}` : `${id}@${order}`;
  return {
    workflow: workflow.map((a) => key(a.id, a.orderIndex, a.actionType)).sort(),
    document: document.map((a) => key(a.id, a.order_index, a.action_type)).sort(),
  };
}

type Edit = 'add' | 'delete' | 'change' | 'update';
const MIXES: Edit[][] = [
  ['add', 'delete'],
  ['change', 'update'],
  ['add', 'delete', 'change', 'update'],
];
const ROUNDS = 25;

describe('send racing approver edits and document updates', () => {
  const tally: Record<Edit, { won: number; refused: number }> = {
    add: { won: 0, refused: 0 },
    delete: { won: 0, refused: 0 },
    change: { won: 0, refused: 0 },
    update: { won: 0, refused: 0 },
  };

  for (const mix of MIXES) {
    it(
      `send + ${mix.join(' + ')}, ${ROUNDS} rounds: the workflow starts from exactly the stored approvers`,
      { timeout: 240_000 },
      async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const doc = await createDocument(h, {
            workflowType: 'sequential',
            approvers: [
              { name: 'First', phone: PHONES.saudiA, action_type: 'sign', order: 1 },
              { name: 'Second', phone: PHONES.saudiB, action_type: 'approve_only', order: 2 },
              { name: 'Third', phone: PHONES.saudiC, action_type: 'review_only', order: 3 },
            ],
          });
          const [, second, third] = doc.approvers;
          const sendKey = `send-${randomBytes(6).toString('hex')}`;
          const addKey = `add-${randomBytes(6).toString('hex')}`;
          const requests: Record<Edit, () => Promise<Answer>> = {
            add: () =>
              call(
                `/documents/${doc.id}/approvers`,
                'POST',
                { name: 'Late', phone: PHONES.uk, action_type: 'approve_only' },
                { 'Idempotency-Key': addKey },
              ),
            delete: () => call(`/approvers/${third!.id}`, 'DELETE'),
            change: () =>
              call(`/approvers/${second!.id}`, 'PUT', { action_type: 'review_only', order_index: 7 }),
            update: () =>
              call(`/documents/${doc.id}`, 'PUT', { workflow_type: 'parallel', expires_in_days: 3 }),
          };

          const [sent, ...edits] = await Promise.all([
            jittered(25, () =>
              call(`/documents/${doc.id}/send`, 'POST', undefined, { 'Idempotency-Key': sendKey }),
            ),
            ...mix.map((edit) => jittered(25, requests[edit])),
          ]);
          const context = `round ${round}: send ${sent.status}, ${mix.map((e, i) => `${e} ${edits[i]!.status}`).join(', ')}`;
          expect(sent.status, `${context} ${JSON.stringify(sent.body)}`).toBe(200);
          expect(sent.body.data!.status).toBe('pending');

          const { document, approvers } = await stored(doc.id);
          expect(document.status, context).not.toBe('draft');
          const names = approvers.map((a) => a.name_en);
          const won: Partial<Record<Edit, boolean>> = {};
          mix.forEach((edit, i) => {
            const answer = edits[i]!;
            if (answer.status === 409) {
              // Lost the race: refused by name of the status, nothing changed.
              expect(answer.body.error!.message, context).toMatch(/^Document is pending; /);
              won[edit] = false;
              tally[edit].refused++;
            } else {
              expect(answer.status, `${context} ${JSON.stringify(answer.body)}`).toBe(
                edit === 'add' ? 201 : 200,
              );
              won[edit] = true;
              tally[edit].won++;
            }
          });
          if (won.add !== undefined) expect(names.includes('Late'), context).toBe(won.add);
          if (won.delete !== undefined) expect(names.includes('Third'), context).toBe(!won.delete);
          if (won.change !== undefined) {
            const changed = approvers.find((a) => a.id === second!.id)!;
            expect([changed.action_type, changed.order_index], context).toEqual(
              won.change ? ['review_only', 7] : ['approve_only', 2],
            );
          }
          if (won.update !== undefined)
            expect(document.workflow_type, context).toBe(won.update ? 'parallel' : 'sequential');

          // The workflow started from exactly what the document holds: approvers, order, actions, type, deadline.
          const input = await workflowInput(doc.id);
          const compared = sameSet(input.approvers, approvers);
          expect(compared.workflow, context).toEqual(compared.document);
          expect(input.workflowType, context).toBe(document.workflow_type);
          expect(input.expiresAt, context).toBe(document.expires_at.toISOString());
          expect(document.workflow_id).toBe(approvalWorkflowId(doc.id));

          // And the running workflow knows every stored approver, none other: nobody is left waiting for ever.
          const view = await h.service.temporal.client.workflow
            .getHandle(approvalWorkflowId(doc.id))
            .query(approvalStatusQuery);
          const running = sameSet(view.approvers, approvers, false);
          expect(running.workflow, context).toEqual(running.document);

          // document.sent recorded once, by the workflow's first activity.
          const sentEvents = await h.service.database
            .db('document_events')
            .where({ document_id: doc.id, event: 'document.sent' })
            .count<{ count: string }[]>({ count: '*' });
          expect(Number(sentEvents[0]!.count), context).toBe(1);

          // Idempotency-Key replays: the send's 200 is replayed; an add that won is replayed (not added twice), an
          // add that lost runs again and is refused again.
          const replayedSend = await call(`/documents/${doc.id}/send`, 'POST', undefined, {
            'Idempotency-Key': sendKey,
          });
          expect([replayedSend.status, replayedSend.replayed], context).toEqual([200, true]);
          if (won.add !== undefined) {
            const again = await requests.add();
            if (won.add) {
              expect([again.status, again.replayed], context).toEqual([201, true]);
              expect(again.body.data!.id).toBe(edits[mix.indexOf('add')]!.body.data!.id);
            } else {
              expect([again.status, again.replayed], context).toEqual([409, false]);
              expect(again.body.error!.message).toMatch(/^Document is pending; /);
            }
            const late = (await stored(doc.id)).approvers.filter((a) => a.name_en === 'Late');
            expect(late, context).toHaveLength(won.add ? 1 : 0);
          }
        }
      },
    );
  }

  it('saw edits both win and lose the race', () => {
    console.log('send-lock race tally', JSON.stringify(tally));
    const all = Object.values(tally);
    expect(all.reduce((n, t) => n + t.won, 0)).toBeGreaterThan(0);
    expect(all.reduce((n, t) => n + t.refused, 0)).toBeGreaterThan(0);
  });
});

describe('two sends of one document', () => {
  it('one 200, one 409 naming the status; one workflow, one document.sent', async () => {
    for (let round = 0; round < 5; round++) {
      const doc = await createDocument(h, {
        workflowType: 'parallel',
        approvers: [{ name: 'Only', phone: PHONES.saudiA, action_type: 'approve_only' }],
      });
      const answers = await Promise.all([send(h, doc.id), send(h, doc.id)]);
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409]);
      const refused = answers.find((r) => r.status === 409)!;
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /^Document is pending; only a draft can be sent/,
      );
      const sentEvents = await h.service.database
        .db('document_events')
        .where({ document_id: doc.id, event: 'document.sent' })
        .count<{ count: string }[]>({ count: '*' });
      expect(Number(sentEvents[0]!.count)).toBe(1);
    }
  });
});

describe('a send whose workflow cannot start', () => {
  it('answers 503 and leaves a draft that edits can change and a later send sends', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Only', phone: PHONES.saudiA, action_type: 'sign' }],
    });
    // A second API on the same database whose Temporal address is a closed port: the start itself fails.
    const temporal = createTemporalClient({ address: `127.0.0.1:${await freePort()}`, namespace: 'default' });
    // It gives up after 2 s (APPROVAL_ANSWER_TIMEOUT_SECONDS) rather than the default 20 s.
    const config = { ...h.service.deps.config, approvalAnswerTimeoutMs: 2000 };
    const api = await startApiServer({ ...h.service.deps, config, temporal }, '127.0.0.1', 0);
    try {
      const res = await fetch(`${api.url}/api/v1/documents/${doc.id}/send`, {
        method: 'POST',
        headers: { authorization: h.account.authorization },
      });
      const body = (await res.json()) as { error: { code: number; message: string } };
      expect(res.status, JSON.stringify(body)).toBe(503);
      expect(body.error.code).toBe(503);
      expect(body.error.message).toMatch(/try again/);
    } finally {
      await api.stop();
      await temporal.close();
    }
    const after = await stored(doc.id);
    expect(after.document.status).toBe('draft');
    expect(after.document.workflow_id).toBeNull();
    await expect(
      h.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id)).describe(),
    ).rejects.toThrow(/not found/i);

    // Still a draft in every way: an edit goes through, and the next send starts from the edited set.
    const added = await call(`/documents/${doc.id}/approvers`, 'POST', {
      name: 'Added after the failure',
      phone: PHONES.uk,
      action_type: 'approve_only',
    });
    expect(added.status).toBe(201);
    const sent = await send(h, doc.id);
    expect(sent.status).toBe(200);
    const { approvers } = await stored(doc.id);
    const compared = sameSet((await workflowInput(doc.id)).approvers, approvers);
    expect(compared.workflow).toHaveLength(2);
    expect(compared.workflow).toEqual(compared.document);
    await eventually(async () => (await stored(doc.id)).document.status === 'pending');
  });
});

describe('a workflow started by a send that never committed (the crash window)', () => {
  // No worker at first: the workflow is started as the send would start it, and its first activity
  // (markDocumentSent) runs only once the test starts the worker, as after a crash between start and commit.
  let w: FlowHarness;
  beforeAll(async () => {
    w = await startFlowHarness({ worker: false });
  });
  afterAll(() => w.close());

  async function startAsTheSendWould(documentId: string): Promise<void> {
    const db = w.service.database.db;
    const document = (await documentsStore(db).findById(w.account.accountId, documentId))!;
    const approvers = await approversStore(db).listByDocument(documentId);
    await createApprovalClient({ client: w.service.temporal.client, taskQueue: w.service.taskQueue }).start(
      document,
      approvers,
    );
  }
  const documentRow = (id: string) =>
    w.service.database.db('documents').where({ id }).first<{ status: string; workflow_id: string | null }>();
  const sentEvents = async (id: string) =>
    Number(
      (
        await w.service.database
          .db('document_events')
          .where({ document_id: id, event: 'document.sent' })
          .count<{ count: string }[]>({ count: '*' })
      )[0]!.count,
    );
  const request = (path: string, method: string, body?: unknown) =>
    w.service.request(path, {
      method,
      account: w.account,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });

  it('moves an unchanged draft to pending itself, recording document.sent once', async () => {
    const doc = await createDocument(w, {
      workflowType: 'sequential',
      approvers: [{ name: 'Only', phone: PHONES.saudiA, action_type: 'sign' }],
    });
    await startAsTheSendWould(doc.id);
    await w.service.startWorker();
    try {
      await eventually(async () => (await documentRow(doc.id)).status === 'pending', 60_000);
      expect((await documentRow(doc.id)).workflow_id).toBe(approvalWorkflowId(doc.id));
      await eventually(async () => (await sentEvents(doc.id)) === 1, 60_000);
    } finally {
      await w.service.stopWorker();
    }
  });

  it('ends the run when the draft was edited meanwhile; the draft is sent again from the edited set', async () => {
    const doc = await createDocument(w, {
      workflowType: 'sequential',
      approvers: [{ name: 'Only', phone: PHONES.saudiA, action_type: 'sign' }],
    });
    await startAsTheSendWould(doc.id);
    // Still a draft: an edit goes through; a send meanwhile is refused while the open run is settled.
    expect(
      (
        await request(`/documents/${doc.id}/approvers`, 'POST', {
          name: 'Added meanwhile',
          phone: PHONES.uk,
          action_type: 'approve_only',
        })
      ).status,
    ).toBe(201);
    const early = await request(`/documents/${doc.id}/send`, 'POST');
    expect(early.status).toBe(409);
    expect(((await early.json()) as { error: { message: string } }).error.message).toMatch(
      /still being settled/,
    );

    await w.service.startWorker();
    try {
      const handle = w.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id));
      await eventually(async () => (await handle.describe()).status.name === 'TERMINATED', 60_000);
      expect((await documentRow(doc.id)).status).toBe('draft');
      expect(await sentEvents(doc.id)).toBe(0);

      const sent = await request(`/documents/${doc.id}/send`, 'POST');
      expect(sent.status, await sent.clone().text()).toBe(200);
      const approvers = await w.service.database
        .db('approvers')
        .where({ document_id: doc.id })
        .select<StoredApprover[]>('id', 'name_en', 'order_index', 'action_type');
      const history = await handle.fetchHistory();
      const input: ApprovalWorkflowInput = defaultPayloadConverter.fromPayload(
        history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!,
      );
      const compared = sameSet(input.approvers, approvers);
      expect(compared.workflow).toHaveLength(2);
      expect(compared.workflow).toEqual(compared.document);
      expect((await documentRow(doc.id)).status).toBe('pending');
      expect(await sentEvents(doc.id)).toBe(1);
    } finally {
      await w.service.stopWorker();
    }
  });
});
