import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalWorkflowId } from '../../src/features/approval/definitions.ts';
import type { WorkersStatus } from '../../src/runtime/workers-command.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { workflowBuildId } from '../../src/temporal/workflow-build-id.ts';
import {
  createDocument,
  eventually,
  type FlowHarness,
  linkTokenOf,
  pagePost,
  PHONES,
  quickRepliesOf,
  requestFor,
  localActivities,
  scheduledActivities,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
} from '../helpers/approval-flow.ts';
import { cli } from '../helpers/retry-cli.ts';
import { pinnedBuildOf, startWorkerOf, type ExtraWorker } from '../helpers/worker-versions.ts';

/**
 * An upgrade with documents in flight: runs started by the version before actions were recorded by the API
 * (test/fixtures/workflows-act-update, pinned to that version) still take actions as the `act` update, and the
 * API sends it to them because their first activity wrote no protocol row; new runs follow recorded actions.
 */
const PREVIOUS = path.resolve(import.meta.dirname, '../fixtures/workflows-act-update/index.ts');

let h: FlowHarness;
let previous: ExtraWorker | undefined;
beforeAll(async () => {
  h = await startFlowHarness();
});
afterAll(async () => {
  await previous?.stop();
  await h.close();
});

async function workers(...args: string[]): Promise<WorkersStatus> {
  const out = await cli(h.service, ['workers', ...args]);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as WorkersStatus;
}

async function sequentialPair() {
  const doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [
      { name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' },
      { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' },
    ],
  });
  expect((await send(h, doc.id)).status).toBe(200);
  return doc;
}

describe('upgrading to actions recorded by the API', () => {
  it('a document started on the previous version completes there through the act update', async () => {
    const current = await workflowBuildId(workflowsPath());
    previous = await startWorkerOf(h.service, { workflowsPath: PREVIOUS, versioned: true });
    const before = previous.buildId!;
    expect(before).not.toBe(current);
    await eventually(
      async () => (await workers('status')).versions.some((v) => v.buildId === before),
      30_000,
    );
    // The previous version current, as it was before the upgrade: a document is sent on it.
    await workers('promote', '--build-id', before);
    const old = await sequentialPair();
    const oldFirst = await requestFor(h, PHONES.saudiA, old.id, 60_000);
    // The upgrade: the new version current; the old run stays pinned to its version.
    await workers('promote', '--build-id', current);
    const fresh = await sequentialPair();

    const handle = (id: string) => h.service.temporal.client.workflow.getHandle(approvalWorkflowId(id));
    expect(await pinnedBuildOf(handle(old.id))).toBe(before);
    const protocols = async (id: string) =>
      h.service.database.db('approval_run_protocols').where({ document_id: id });
    expect(await protocols(old.id)).toEqual([]);

    expect((await pagePost(h, linkTokenOf(oldFirst), 'complete', {})).status).toBe(200);
    const oldSecond = await requestFor(h, PHONES.saudiB, old.id, 60_000);
    expect((await tapButton(h, { from: PHONES.saudiB, payload: quickRepliesOf(oldSecond)[0]! })).status).toBe(
      200,
    );
    await eventually(async () => (await statusOf(h, old.id)).status === 'approved', 90_000);
    expect(((await handle(old.id).result()) as { status: string }).status).toBe('approved');
    // The old run wrote the actions itself, with the activities of its version.
    expect(await scheduledActivities(h, old.id)).toEqual([
      'recordActionAndNotify',
      'recordActionAndFinalize',
    ]);

    // The new run, on the new version, follows the actions the API recorded.
    await eventually(async () => (await protocols(fresh.id)).length === 1, 30_000);
    const freshFirst = await requestFor(h, PHONES.saudiA, fresh.id, 60_000);
    expect((await pagePost(h, linkTokenOf(freshFirst), 'complete', {})).status).toBe(200);
    const freshSecond = await requestFor(h, PHONES.saudiB, fresh.id, 60_000);
    expect((await pagePost(h, linkTokenOf(freshSecond), 'complete', {})).status).toBe(200);
    await eventually(async () => (await statusOf(h, fresh.id)).status === 'approved', 90_000);
    expect(await pinnedBuildOf(handle(fresh.id))).toBe(current);
    // Its finalization a local activity (its marker in the history once the run has completed): no ordinary
    // activity at all.
    await handle(fresh.id).result();
    expect(await scheduledActivities(h, fresh.id)).toEqual([]);
    expect((await localActivities(h, fresh.id)).map((a) => a.name)).toContain('finalizeAndSendSignedCopies');
    expect(await h.service.database.db('approval_signals').where({ document_id: fresh.id })).toHaveLength(2);
  }, 300_000);
});
