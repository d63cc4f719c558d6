import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalWorkflowId, type ApprovalView } from '../../src/features/approval/definitions.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  pagePost,
  PHONES,
  requestFor,
  send,
  startFlowHarness,
  statusOf,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * The leaner workflow (patch `approval-lean-v2`): a rejection from the approval page closes the document, so the workflow
 * completes right after the `act` update. With the rejection's read-model write as a local activity (patch
 * `approval-lean-v1`), the update's acceptance and the workflow's completion went to Temporal in one workflow
 * task; when any event reached the workflow while that task ran (in CI: the approval request's activity finishing
 * after the workflow had cancelled it), the server refused the completion (UNHANDLED_COMMAND) and aborted the
 * update it had not seen accepted: the page answered 500 (FAILED_PRECONDITION "unexpected workflow task failure")
 * although the local activity had already written the rejection, and the workflow went on waiting.
 *
 * Here the window is made certain instead of likely: the test holds the document's row lock, so the rejection's
 * write waits, and sends the workflow an event (a signal) while it waits; then lets the write go.
 */
const ROUNDS = 3;

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness();
}, 120_000);
afterAll(() => h.close());

const db = () => h.service.database.db;

/** A backend of this test's database waits on a lock (the rejection's write, behind the test's row lock). */
const writeWaits = () =>
  eventually(async () => {
    const { rows } = await db().raw<{ rows: { n: number }[] }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0]!.n > 0;
  }, 30_000);

/** The workflow tasks the server failed, with their causes and messages (for the assertion's message). */
async function failedTasks(workflowId: string): Promise<string[]> {
  const history = await h.service.temporal.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const failed = e.workflowTaskFailedEventAttributes;
    return failed ? [`${String(failed.cause)}: ${failed.failure?.message ?? ''}`] : [];
  });
}

describe('a rejection from the page while another event reaches the workflow', () => {
  it(`is taken: 200, the workflow ends rejected and the read model says so (${ROUNDS} rounds)`, async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const doc = await createDocument(h, {
        workflowType: 'sequential',
        approvers: [
          { name: 'Rana', phone: PHONES.saudiA, action_type: 'approve_only', order: 1 },
          { name: 'Tom', phone: PHONES.uk, action_type: 'sign', order: 2 },
        ],
      });
      expect((await send(h, doc.id)).status).toBe(200);
      const request = await requestFor(h, PHONES.saudiA, doc.id, 60_000);
      // The approval request's own write is done, so the only write behind the lock below is the rejection's.
      await eventually(async () => (await statusOf(h, doc.id)).approvers[0]?.status === 'notified', 60_000);

      const workflowId = approvalWorkflowId(doc.id);
      const handle = h.service.temporal.client.workflow.getHandle(workflowId);
      const trx = await db().transaction();
      let answer: Promise<Response>;
      try {
        // NO KEY UPDATE: the page's evidence row (a foreign key to the document) can still be written.
        await trx.raw('SELECT id FROM documents WHERE id = ? FOR NO KEY UPDATE', [doc.id]);
        answer = pagePost(h, linkTokenOf(request), 'reject', { reason: `round ${round}` });
        await writeWaits();
        await handle.signal('unknown-probe');
      } finally {
        await trx.commit();
      }
      const res = await answer;
      const text = await res.text();
      expect(res.status, `round ${round}: ${text} ${JSON.stringify(await failedTasks(workflowId))}`).toBe(
        200,
      );

      const result = (await handle.result()) as ApprovalView;
      expect(result.status, `round ${round}`).toBe('rejected');
      const status = await statusOf(h, doc.id);
      expect(status.status, `round ${round}`).toBe('rejected');
      expect(status.approvers.map((a) => a.status)).toEqual(['rejected', 'waiting']);
    }
  }, 300_000);
});
