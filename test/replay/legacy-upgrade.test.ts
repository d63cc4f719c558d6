import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  approvalWorkflowId,
  LEGACY_APPROVAL_WORKFLOW_TYPE,
} from '../../src/features/approval/definitions.ts';
import { PATCHES } from '../../src/features/approval/workflow/legacy/approval-workflow.ts';
import { workflowBuildId } from '../../src/temporal/workflow-build-id.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  pagePost,
  PHONES,
  quickRepliesOf,
  requestFor,
  statusOf,
  tapButton,
} from '../helpers/approval-flow.ts';
import { type FinalPdfHarness, startFinalPdfHarness } from '../helpers/final-pdf.ts';
import { patchesIn, replayHistories } from '../helpers/histories.ts';
import {
  buildsThatRan,
  pinnedBuildOf,
  sendAsBeforeVersioning,
  startWorkerOf,
} from '../helpers/worker-versions.ts';

/**
 * The first release with worker versioning, deployed under a document in flight: the document was sent by the
 * release before (an unversioned worker running the approval workflow of that time, type `approvalWorkflow`),
 * that worker stops, the versioned worker of this release starts and makes its version current, and Temporal hands
 * the run to it at its next workflow task. The run finishes on the code that started it: the legacy module, which
 * this release still registers under that type.
 */
const BEFORE_VERSIONING = path.resolve(
  import.meta.dirname,
  '../fixtures/workflows-before-versioning/index.ts',
);

let h: FinalPdfHarness;
beforeAll(async () => {
  h = await startFinalPdfHarness({ worker: false });
});
afterAll(async () => {
  await h.close();
  await rm(h.dataDir, { recursive: true, force: true });
});

describe('upgrading to worker versioning with a document in flight', () => {
  it('a document sent before versioning finishes on the code that started it, on the new version', async () => {
    const before = await startWorkerOf(h.service, { workflowsPath: BEFORE_VERSIONING, versioned: false });
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'Signer', phone: PHONES.saudiA, action_type: 'sign' },
        { name: 'Approver', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    await sendAsBeforeVersioning(h, doc.id);
    const signer = await requestFor(h, PHONES.saudiA, doc.id, 60_000);
    await eventually(async () => (await statusOf(h, doc.id)).approvers[0]!.status === 'notified');
    const handle = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(doc.id));
    expect(await pinnedBuildOf(handle)).toBeUndefined();

    // The upgrade: the release before stops, this one starts (its version made current as it starts).
    await before.stop();
    await h.service.startWorker();
    const current = await workflowBuildId(workflowsPath());

    const signed = await pagePost(h, linkTokenOf(signer), 'complete', { typed_name: 'Signer' });
    expect(signed.status, await signed.text()).toBe(200);
    const second = await requestFor(h, PHONES.saudiB, doc.id, 60_000);
    expect((await tapButton(h, { from: PHONES.saudiB, payload: quickRepliesOf(second)[0]! })).status).toBe(
      200,
    );
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 90_000);
    expect(((await handle.result()) as { status: string }).status).toBe('approved');

    // Run by the release before, then by the new version, to which it is now pinned; the type never changed.
    const description = await handle.describe();
    expect(description.type).toBe(LEGACY_APPROVAL_WORKFLOW_TYPE);
    expect(await buildsThatRan(handle)).toEqual(['(unversioned)', current]);
    expect(await pinnedBuildOf(handle)).toBe(current);
    // The legacy code's own commands throughout: the patch marker only it writes, and its whole history replays
    // through the legacy module alone.
    const history = await handle.fetchHistory();
    expect(patchesIn(history)).toEqual([PATCHES.leanV5]);
    const [replayed] = await replayHistories(BEFORE_VERSIONING, [{ workflowId: doc.id, history }]);
    expect(replayed?.error).toBeUndefined();
  }, 240_000);
});
