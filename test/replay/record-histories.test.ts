import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { exportHistory } from '../helpers/histories.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  messagesTo,
  nthMessageTo,
  pagePost,
  PHONES,
  quickRepliesOf,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  TINY_PNG,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Records the workflow histories that `replay.test.ts` replays. Run it when the workflow changes on purpose
 * (`npm run histories:record`); the normal suite only replays what is committed under test/histories.
 */
const HISTORIES = path.resolve(import.meta.dirname, '../histories');

describe.runIf(process.env.RECORD_HISTORIES === '1')('record approval histories', () => {
  let h: FlowHarness;
  beforeAll(async () => {
    h = await startFlowHarness();
  });
  afterAll(() => h.close());

  async function save(name: string, documentId: string, final: string) {
    await eventually(async () => (await statusOf(h, documentId)).status === final, 20_000);
    const workflowId = `document-${documentId}`;
    await h.service.temporal.client.workflow.getHandle(workflowId).result();
    await exportHistory(workflowId, path.join(HISTORIES, `${name}.json`));
  }

  it('sequential, approved (sign, stamp, approve, review)', async () => {
    const since = [PHONES.saudiA, PHONES.saudiB, PHONES.uk, PHONES.saudiC].map(
      (p) => messagesTo(h, p).length,
    );
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'Signer', phone: PHONES.saudiA, action_type: 'sign' },
        { name: 'Stamper', phone: PHONES.saudiB, action_type: 'stamp' },
        { name: 'Approver', phone: PHONES.uk, action_type: 'approve_only' },
        { name: 'Reviewer', phone: PHONES.saudiC, action_type: 'review_only' },
      ],
    });
    await send(h, doc.id);
    await pagePost(h, linkTokenOf(await nthMessageTo(h, PHONES.saudiA, since[0]!)), 'complete', {
      signature_png: TINY_PNG,
    });
    await pagePost(h, linkTokenOf(await nthMessageTo(h, PHONES.saudiB, since[1]!)), 'complete', {
      generated_seal: true,
    });
    await tapButton(h, {
      from: PHONES.uk,
      payload: quickRepliesOf(await nthMessageTo(h, PHONES.uk, since[2]!))[0]!,
    });
    await tapButton(h, {
      from: PHONES.saudiC,
      payload: quickRepliesOf(await nthMessageTo(h, PHONES.saudiC, since[3]!))[0]!,
    });
    await save('sequential-approved', doc.id, 'approved');
  });

  it('parallel, approved, with a reminder', async () => {
    const since = [PHONES.saudiA, PHONES.saudiB].map((p) => messagesTo(h, p).length);
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'sign' },
      ],
    });
    await send(h, doc.id);
    const a = await nthMessageTo(h, PHONES.saudiA, since[0]!);
    const b = await nthMessageTo(h, PHONES.saudiB, since[1]!);
    await eventually(async () => (await statusOf(h, doc.id)).approvers.every((x) => x.status === 'notified'));
    await h.service.request(`/approvers/${doc.approvers[0]!.id}/remind`, {
      method: 'POST',
      account: h.account,
    });
    await pagePost(h, linkTokenOf(b), 'complete', { typed_name: 'B' });
    await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(a)[0]! });
    await save('parallel-approved', doc.id, 'approved');
  });

  it('rejected', async () => {
    const since = messagesTo(h, PHONES.saudiA).length;
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    await send(h, doc.id);
    await tapButton(h, {
      from: PHONES.saudiA,
      payload: quickRepliesOf(await nthMessageTo(h, PHONES.saudiA, since))[1]!,
    });
    await save('rejected', doc.id, 'rejected');
  });

  it('voided', async () => {
    const since = messagesTo(h, PHONES.saudiA).length;
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    await send(h, doc.id);
    await nthMessageTo(h, PHONES.saudiA, since);
    await h.service.request(`/documents/${doc.id}/void`, { method: 'POST', account: h.account });
    await nthMessageTo(h, PHONES.saudiA, since, 2); // the voided notice
    await save('voided', doc.id, 'voided');
  });

  it('expired', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    await h.service.database
      .db('documents')
      .where({ id: doc.id })
      .update({ expires_at: new Date(Date.now() + 2000) });
    await send(h, doc.id);
    await save('expired', doc.id, 'expired');
  });
});
