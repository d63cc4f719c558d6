import { writeFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createActivities } from '../../src/activities/index.ts';
import { createWorkerDeps } from '../../src/runtime/worker-deps.ts';
import { PATCHES } from '../../src/features/approval/workflow/legacy/approval-workflow.ts';
import {
  eventually,
  linkTokenOf,
  messagesTo,
  pagePost,
  quickRepliesOf,
  statusOf,
  tapButton,
} from '../helpers/approval-flow.ts';
import {
  createBilingualDocument,
  download,
  type DownloadBody,
  fetchPublic,
  type FinalPdfHarness,
  sixApprovers,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { pdfsig } from '../helpers/pdf-tools.ts';
import { sendAsBeforeVersioning } from '../helpers/worker-versions.ts';

/**
 * A workflow started by the previous code finishes on the new worker. The previous approval
 * workflow is the one frozen from commit 49f5e27 under test/fixtures/workflow-v1 (by its freeze.sh); it runs on a
 * worker for the test's task queue, is stopped once the first approver has been notified (a deploy), and the
 * current worker takes the same queue and finishes the document.
 */
const V1 = path.resolve(import.meta.dirname, '../fixtures/workflow-v1/src/index.ts');
const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

let h: FinalPdfHarness;
beforeAll(async () => {
  h = await startFinalPdfHarness({ worker: false });
});
afterAll(async () => {
  await h.close();
  await rm(h.dataDir, { recursive: true, force: true });
});

describe('a deploy in the middle of an approval', () => {
  it('a workflow started by the old code finishes on the new worker, approved with a valid signed PDF', async () => {
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const old = await Worker.create({
      connection,
      namespace: h.service.config.temporal.namespace,
      taskQueue: h.service.taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: V1, logger: silent }),
      activities: createActivities(
        createWorkerDeps(h.service.config, h.service.database.db, h.service.logger),
      ),
      stickyQueueScheduleToStartTimeout: '1s',
    });
    const oldRun = old.run();

    const approvers = sixApprovers().filter((_, i) => i === 1 || i === 4); // typed sign, then approve_only
    const [signer, approver] = approvers as [(typeof approvers)[0], (typeof approvers)[0]];
    const doc = await createBilingualDocument(h, 'sequential', approvers);
    const before = messagesTo(h, approver.phone).length;
    const first = messagesTo(h, signer.phone).length;
    // Sent as the API of that time sent it: the workflow type the old worker runs.
    await sendAsBeforeVersioning(h, doc.id);
    const request = await eventually(() => messagesTo(h, signer.phone)[first], 60_000);
    await eventually(async () => (await statusOf(h, doc.id)).approvers[0]!.status === 'notified');

    // The deploy: the old worker stops, the new one takes the queue.
    old.shutdown();
    await oldRun;
    await connection.close();
    await h.service.startWorker();

    const signed = await pagePost(h, linkTokenOf(request), 'complete', { typed_name: signer.name_en });
    expect(signed.status, await signed.text()).toBe(200);
    const second = await eventually(() => messagesTo(h, approver.phone)[before], 60_000);
    const tapped = await tapButton(h, { from: approver.phone, payload: quickRepliesOf(second)[0]! });
    expect(tapped.status).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 90_000);

    const handle = h.service.temporal.client.workflow.getHandle(`document-${doc.id}`);
    expect(((await handle.result()) as { status: string }).status).toBe('approved');
    // The new code took over where the old one left off: no recovery-v1 marker at the start (the old code
    // started it), the finalization patch's marker where finalization began.
    const patches = ((await handle.fetchHistory()).events ?? [])
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
      .map((e) => {
        const data = e.markerRecordedEventAttributes!.details!['patch-data']!.payloads![0]!.data!;
        return (JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id;
      });
    expect(patches).toEqual([PATCHES.finalizationRecovery, PATCHES.signedCopies]);

    const dl = (await (await download(h, doc.id)).json()) as DownloadBody;
    const pdf = Buffer.from(await (await fetchPublic(h, dl.data.download_url)).arrayBuffer());
    const file = path.join(h.dataDir, `${doc.reference}.pdf`);
    await writeFile(file, pdf);
    const sig = pdfsig(file);
    expect(
      sig.signatures.map((s) => s.valid),
      sig.output,
    ).toEqual([true]);
  }, 240_000);
});
