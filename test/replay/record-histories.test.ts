import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalStatusQuery, retryFinalizationUpdate } from '../../src/features/approval/definitions.ts';
import { exportHistory } from '../helpers/histories.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  pagePost,
  PHONES,
  quickRepliesOf,
  requestFor,
  requestsFor,
  send,
  statusOf,
  tapButton,
  TINY_PNG,
} from '../helpers/approval-flow.ts';
import { type FinalPdfHarness, startFinalPdfHarness } from '../helpers/final-pdf.ts';
import { failWrites } from '../helpers/write-faults.ts';

/**
 * Records the workflow histories that `replay.test.ts` replays (`npm run histories:record`; the normal suite only
 * replays what is committed under test/histories).
 *
 * A legacy history proves that runs of the code that recorded it replay through today's code, so it is never
 * recorded again. test/histories/*.json came from the workflow before the first patch (v1), v2/ from the code with
 * the recovery patches (actions carrying their evidence inline); this recorder writes the current code's runs (since
 * evidence rows: actions carry the id of their evidence row) under test/histories/<VERSION>/ and skips every name already
 * there. The legacy workflow (v1 to v9) never changes again, so its sets are final.
 *
 * v4 (patch `approval-lean-v1`): read-model writes as local activities, finalization and signed copies
 * in one activity.
 * v5 (patch `approval-lean-v2`): as v4, with approval requests as local activities too, and the writes
 * that close the document from an update (a rejection, a void) ordinary activities again.
 * v6 (patch `approval-lean-v3`): as v5, with an accepted action or delegation touching nothing outside
 * the workflow (no read-model write, no approval request) before its acceptance is in the history.
 * v7 (patch `approval-lean-v4`): as v6, with that write an ordinary activity scheduled by the task that
 * accepts the update (no 1 ms timer, which Temporal fires after a second), and nobody asked until it has settled.
 * v8 (patch `approval-lean-v5`, the only patch the last legacy runs ask): as v7, with the send recorded, the
 * policies read and the first requests sent by one local activity; an action and the requests it made due, or the
 * action that completes the document and its finalization, in one ordinary activity.
 * v9 (patch `approval-delegate-request-v1`): as v8, with a delegate's approval request an ordinary activity, so the
 * task that completes the `delegate` update does not wait for it; only `delegated-approved` is recorded, the one
 * run whose commands changed.
 * document-approval: the runs of `documentApproval`, the workflow every new document starts since Worker
 * Versioning. Each run is pinned to the worker version that started it, so a change to its commands needs no
 * `patched()`, and this set then stops replaying: deploy the change as a new version (docs/operations.md,
 * "Upgrading workflow code") and record the set again (delete the folder, RECORD_HISTORIES=1), so it always
 * holds runs of the code in the tree.
 *
 * RECORD_HISTORIES=1 records every missing name; RECORD_HISTORIES=name,name only those (still never overwriting).
 */
const VERSION = 'document-approval';
const DIR = path.resolve(import.meta.dirname, '../histories', VERSION);
const wanted = (process.env.RECORD_HISTORIES ?? '').split(',').map((s) => s.trim());
const NAMES = [
  'sequential-approved',
  'parallel-approved',
  'rejected',
  'voided',
  'expired',
  'finalization-retried-approved',
  'finalization-failed-voided',
  'notification-failed-expired',
  'attention-retried-expired',
  'auto-reminders-voided',
  'signing-groups-approved',
  'delegated-approved',
] as const;
const recording = (name: (typeof NAMES)[number]) =>
  (wanted.includes('1') || wanted.includes(name)) && !existsSync(path.join(DIR, `${name}.json`));

/** The retry policies are short so the failure paths below run in seconds; each workflow keeps its values. */
const ENV = {
  APPROVAL_NOTIFY_RETRY_SECONDS: '3',
  APPROVAL_WRITE_RETRY_SECONDS: '3',
  // Long enough for a signing on a loaded machine; the finalization failures below are permanent and fail at once.
  APPROVAL_FINALIZE_RETRY_SECONDS: '60',
  REMIND_COOLDOWN_MINUTES: '0',
  // A scaled hour of automatic reminders is one second (only documents sent with reminders have timers for them).
  APPROVAL_TIMER_SCALE: String(1 / 3600),
};
const OUTAGE = Array.from({ length: 500 }, () => ({ kind: 'raw' as const, status: 500, body: 'outage' }));
const LONG = 60_000;

describe.runIf(NAMES.some(recording))(`record approval histories (${VERSION})`, () => {
  let h: FinalPdfHarness;
  beforeAll(async () => {
    await mkdir(DIR, { recursive: true });
    h = await startFinalPdfHarness({ env: ENV });
  });
  afterAll(() => h.close());

  const record = (name: (typeof NAMES)[number], title: string, run: () => Promise<void>) =>
    it.runIf(recording(name))(`${name}: ${title}`, run, 240_000);

  const handleOf = (documentId: string) =>
    h.service.temporal.client.workflow.getHandle(`document-${documentId}`);
  const retry = (documentId: string) => handleOf(documentId).executeUpdate(retryFinalizationUpdate);
  const approveByButton = async (phone: string, documentId: string) => {
    const request = await requestFor(h, phone, documentId, LONG);
    expect((await tapButton(h, { from: phone, payload: quickRepliesOf(request)[0]! })).status).toBe(200);
  };
  const finalizationFailed = (documentId: string) =>
    eventually(async () => {
      const res = await h.service.request(`/documents/${documentId}`, { account: h.account });
      const body = (await res.json()) as { data: { finalization: { state: string } | null } };
      return body.data.finalization?.state === 'failed';
    }, 120_000);
  /**
   * The stored original no longer matches its SHA-256 (a permanent failure: finalization fails at once); the
   * returned function puts the original back. (Moving the signing certificate away would not do here: the worker
   * keeps the certificate it loaded for an earlier document.)
   */
  const tamperOriginal = async (documentId: string) => {
    const storage = h.service.deps.storage;
    const { file_key } = await h.service.database
      .db('documents')
      .where({ id: documentId })
      .first<{ file_key: string }>('file_key');
    const original = Buffer.concat(await (await storage.get(file_key))!.toArray());
    await storage.put(file_key, Readable.from([Buffer.from('%PDF-1.7\nnot the upload\n')]));
    return async () => {
      await storage.put(file_key, Readable.from([original]));
    };
  };
  const oneApprover = (workflowType: 'sequential' | 'parallel' = 'parallel', phone = PHONES.saudiA) =>
    createDocument(h, {
      workflowType,
      approvers: [{ name: 'A', phone, action_type: 'approve_only' }],
    });
  const expiringIn = async (documentId: string, seconds: number) =>
    h.service.database
      .db('documents')
      .where({ id: documentId })
      .update({ expires_at: new Date(Date.now() + seconds * 1000) });

  async function save(name: string, documentId: string, final: string) {
    await eventually(async () => (await statusOf(h, documentId)).status === final, 120_000);
    const workflowId = `document-${documentId}`;
    await h.service.temporal.client.workflow.getHandle(workflowId).result();
    await exportHistory(workflowId, path.join(DIR, `${name}.json`));
  }

  record('sequential-approved', 'sign, stamp, approve, review', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'Signer', phone: PHONES.saudiA, action_type: 'sign' },
        { name: 'Stamper', phone: PHONES.saudiB, action_type: 'stamp' },
        { name: 'Approver', phone: PHONES.uk, action_type: 'approve_only' },
        { name: 'Reviewer', phone: PHONES.saudiC, action_type: 'review_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const signer = await requestFor(h, PHONES.saudiA, doc.id, LONG);
    await pagePost(h, linkTokenOf(signer), 'complete', { signature_png: TINY_PNG });
    const stamper = await requestFor(h, PHONES.saudiB, doc.id, LONG);
    await pagePost(h, linkTokenOf(stamper), 'complete', { generated_seal: true });
    await approveByButton(PHONES.uk, doc.id);
    await approveByButton(PHONES.saudiC, doc.id);
    await save('sequential-approved', doc.id, 'approved');
  });

  record('parallel-approved', 'with a reminder', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'sign' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const a = await requestFor(h, PHONES.saudiA, doc.id, LONG);
    const b = await requestFor(h, PHONES.saudiB, doc.id, LONG);
    await eventually(async () => (await statusOf(h, doc.id)).approvers.every((x) => x.status === 'notified'));
    const reminded = await h.service.request(`/approvers/${doc.approvers[0]!.id}/remind`, {
      method: 'POST',
      account: h.account,
    });
    expect(reminded.status, await reminded.text()).toBe(200);
    await pagePost(h, linkTokenOf(b), 'complete', { typed_name: 'B' });
    await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(a)[0]! });
    await save('parallel-approved', doc.id, 'approved');
  });

  record(
    'auto-reminders-voided',
    'automatic reminders and the "expires tomorrow" one to the approver who waits, none to the one who acted; then a void',
    async () => {
      const doc = await createDocument(h, {
        workflowType: 'parallel',
        approvers: [
          { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
          { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
        ],
        fields: { 'reminders[first_after_hours]': 1, 'reminders[every_hours]': 1, 'reminders[max]': 2 },
      });
      // A deadline 50 scaled hours away: the "expires tomorrow" reminder is due 26 of them after the send.
      await expiringIn(doc.id, 50);
      expect((await send(h, doc.id)).status).toBe(200);
      await approveByButton(PHONES.saudiB, doc.id);
      // A's approval request, two automatic reminders and the "expires tomorrow" one.
      await eventually(async () => (await requestsFor(h, PHONES.saudiA, doc.id)).length >= 4, 120_000);
      const res = await h.service.request(`/documents/${doc.id}/void`, {
        method: 'POST',
        account: h.account,
      });
      expect(res.status).toBe(200);
      await save('auto-reminders-voided', doc.id, 'voided');
    },
  );

  record(
    'signing-groups-approved',
    'sequential at order 1, 1, 2: the group of two together, the third once both completed',
    async () => {
      const doc = await createDocument(h, {
        workflowType: 'sequential',
        approvers: [
          { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only', order: 1 },
          { name: 'B', phone: PHONES.saudiB, action_type: 'sign', order: 1 },
          { name: 'C', phone: PHONES.uk, action_type: 'approve_only', order: 2 },
        ],
      });
      expect((await send(h, doc.id)).status).toBe(200);
      const b = await requestFor(h, PHONES.saudiB, doc.id, LONG);
      await approveByButton(PHONES.saudiA, doc.id);
      await pagePost(h, linkTokenOf(b), 'complete', { typed_name: 'B' });
      await approveByButton(PHONES.uk, doc.id);
      await save('signing-groups-approved', doc.id, 'approved');
    },
  );

  record(
    'delegated-approved',
    'the first approver delegates; the delegate and the second approve',
    async () => {
      const doc = await createDocument(h, {
        workflowType: 'sequential',
        approvers: [
          { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
          { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
        ],
        fields: { allow_delegation: 'true' },
      });
      expect((await send(h, doc.id)).status).toBe(200);
      const request = await requestFor(h, PHONES.saudiA, doc.id, LONG);
      const res = await fetch(`${h.service.api.url}/a/${linkTokenOf(request)}/delegate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'D', phone: PHONES.uk, reason: 'away' }),
      });
      expect(res.status).toBe(200);
      await approveByButton(PHONES.uk, doc.id);
      await approveByButton(PHONES.saudiB, doc.id);
      await save('delegated-approved', doc.id, 'approved');
    },
  );

  record('rejected', 'the first of two rejects', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const request = await requestFor(h, PHONES.saudiA, doc.id, LONG);
    await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(request)[1]! });
    await save('rejected', doc.id, 'rejected');
  });

  record('voided', 'after the request went out; the voided notice sent', async () => {
    const doc = await oneApprover();
    expect((await send(h, doc.id)).status).toBe(200);
    await requestFor(h, PHONES.saudiA, doc.id, LONG);
    await eventually(async () => (await statusOf(h, doc.id)).approvers[0]!.status === 'notified');
    const res = await h.service.request(`/documents/${doc.id}/void`, {
      method: 'POST',
      account: h.account,
    });
    expect(res.status).toBe(200);
    await save('voided', doc.id, 'voided');
  });

  record('expired', 'the deadline passes unanswered', async () => {
    const doc = await oneApprover();
    await expiringIn(doc.id, 3);
    expect((await send(h, doc.id)).status).toBe(200);
    await save('expired', doc.id, 'expired');
  });

  record(
    'finalization-retried-approved',
    'finalization fails for good, the cause is fixed, the operator retries',
    async () => {
      const doc = await oneApprover();
      const restore = await tamperOriginal(doc.id);
      try {
        expect((await send(h, doc.id)).status).toBe(200);
        await approveByButton(PHONES.saudiA, doc.id);
        await finalizationFailed(doc.id);
      } finally {
        await restore();
      }
      await retry(doc.id);
      await save('finalization-retried-approved', doc.id, 'approved');
    },
  );

  record(
    'finalization-failed-voided',
    'finalization fails for good, then the document is voided',
    async () => {
      const doc = await oneApprover();
      const restore = await tamperOriginal(doc.id);
      try {
        expect((await send(h, doc.id)).status).toBe(200);
        await approveByButton(PHONES.saudiA, doc.id);
        await finalizationFailed(doc.id);
      } finally {
        await restore();
      }
      const res = await h.service.request(`/documents/${doc.id}/void`, {
        method: 'POST',
        account: h.account,
      });
      expect(res.status, await res.text()).toBe(200);
      await save('finalization-failed-voided', doc.id, 'voided');
    },
  );

  record('notification-failed-expired', 'WhatsApp refuses until the notice gives up; expiry', async () => {
    // A number no other recording messages: the outage is this approver's alone, and no other document's message
    // takes its answers.
    const phone = '966531237001';
    const doc = await oneApprover('parallel', phone);
    await expiringIn(doc.id, 30);
    h.graph.scriptFor(phone, ...OUTAGE);
    try {
      expect((await send(h, doc.id)).status).toBe(200);
      await eventually(
        async () => (await statusOf(h, doc.id)).approvers[0]!.notification?.status === 'failed',
        LONG,
      );
      expect((await statusOf(h, doc.id)).status).toBe('pending');
    } finally {
      h.graph.reset();
    }
    await save('notification-failed-expired', doc.id, 'expired');
  });

  record(
    'attention-retried-expired',
    'the expiry (closeDocument) fails for good, parks, is retried',
    async () => {
      const fault = await failWrites(h.service.database.db, 'documentExpired');
      const doc = await oneApprover();
      try {
        await expiringIn(doc.id, 3);
        expect((await send(h, doc.id)).status).toBe(200);
        await eventually(async () => {
          const view = await handleOf(doc.id).query(approvalStatusQuery);
          return view.attention?.activity === 'closeDocument';
        }, LONG);
      } finally {
        await fault.remove();
      }
      await retry(doc.id);
      await save('attention-retried-expired', doc.id, 'expired');
    },
  );
});
