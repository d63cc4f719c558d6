import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalWorkflowId } from '../../src/features/approval/definitions.ts';
import {
  createDocument,
  eventually,
  messagesTo,
  nthMessageTo,
  quickRepliesOf,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { historyText, needlesIn } from '../helpers/histories.ts';

/**
 * A cc recipient's number and name are personal data like an approver's: when WhatsApp's refusal of their signed
 * copy names them and the attempt fails (and is retried), the failure Temporal keeps in the workflow's history
 * says `cc recipient 1` instead.
 */
const APPROVER = '966501440001';
const CC = { phone: '966551440002', name: 'Ottoline Brackenridge' };

let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness();
}, 60_000);
afterAll(() => h?.close());

describe('a cc recipient in a failure', () => {
  it('is redacted before the history keeps it', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Approver', phone: APPROVER, action_type: 'approve_only' }],
      fields: { 'cc[0][phone]': CC.phone, 'cc[0][name]': CC.name },
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const request = await nthMessageTo(h, APPROVER, 0);
    const naming = {
      kind: 'graph_error' as const,
      status: 500,
      code: 131000,
      message: `Something went wrong sending to +${CC.phone} (${CC.name})`,
    };
    // The cc copy with the finalization (refused: left for sendSignedCopies), then the cc copy in that activity's
    // first attempt (refused: the attempt fails), then its retry (sent).
    h.graph.scriptFor(CC.phone, naming, naming);
    const approve = quickRepliesOf(request).find((p) => p.startsWith('approve:'))!;
    expect((await tapButton(h, { from: APPROVER, payload: approve })).status).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 120_000);
    await nthMessageTo(h, CC.phone, 0, 3, 60_000);

    const workflowId = approvalWorkflowId(doc.id);
    const history = await eventually(async () => {
      const text = await historyText(h.service.temporal.client, workflowId);
      // The failed attempt is in the history once the activity has completed on its retry.
      return text.includes('Something went wrong sending to') ? text : undefined;
    }, 60_000);
    expect(
      needlesIn(history, [
        { label: 'cc phone', value: CC.phone },
        { label: 'cc national', value: CC.phone.slice(3) },
        { label: 'cc name', value: CC.name },
      ]),
    ).toEqual([]);
    expect(history).toContain('Something went wrong sending to cc recipient 1 (cc recipient 1)');
    expect(messagesTo(h, CC.phone)).toHaveLength(3);
  }, 240_000);
});
