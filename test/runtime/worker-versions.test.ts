import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalWorkflowId } from '../../src/features/approval/definitions.ts';
import type { WorkersStatus } from '../../src/runtime/workers-command.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { promoteOnStart, workerDeployments } from '../../src/temporal/worker-deployments.ts';
import { workflowBuildId } from '../../src/temporal/workflow-build-id.ts';
import {
  createDocument,
  eventually,
  type FlowHarness,
  PHONES,
  quickRepliesOf,
  requestFor,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
} from '../helpers/approval-flow.ts';
import { cli } from '../helpers/retry-cli.ts';
import { buildsThatRan, pinnedBuildOf, startWorkerOf, type ExtraWorker } from '../helpers/worker-versions.ts';

/**
 * The upgrade procedure of docs/operations.md ("Upgrading workflow code"), followed with two versions of the workflow
 * code: the service's (A) and a variant whose approval runs say so in their result (B). B is deployed beside A,
 * ramped, made current with the operator's command; documents started on A finish on A, new ones start on B, A
 * reports drained and its worker is retired.
 */
const VARIANT = path.resolve(import.meta.dirname, '../fixtures/workflows-variant/index.ts');
/** A third version's code (the frozen previous workflow version): a build no worker of this deployment ran. */
const THIRD = path.resolve(import.meta.dirname, '../fixtures/workflows-act-update/index.ts');

let h: FlowHarness;
let b: ExtraWorker | undefined;
beforeAll(async () => {
  h = await startFlowHarness(); // version A's worker, made current as it starts (WORKER_VERSION_PROMOTION=auto)
});
afterAll(async () => {
  await b?.stop();
  await h.close();
});

async function workers(...args: string[]): Promise<WorkersStatus> {
  const out = await cli(h.service, ['workers', ...args]);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as WorkersStatus;
}

/** A one-approver document, sent; resolves once its approver has the request. */
async function sendOne(phone: string) {
  const doc = await createDocument(h, {
    workflowType: 'parallel',
    approvers: [{ name: 'A', phone, action_type: 'approve_only' }],
  });
  expect((await send(h, doc.id)).status).toBe(200);
  const request = await requestFor(h, phone, doc.id, 60_000);
  return { id: doc.id, approve: () => tapButton(h, { from: phone, payload: quickRepliesOf(request)[0]! }) };
}

async function approvedResult(documentId: string) {
  await eventually(async () => (await statusOf(h, documentId)).status === 'approved', 90_000);
  const handle = h.service.temporal.client.workflow.getHandle(approvalWorkflowId(documentId));
  return {
    result: (await handle.result()) as { status: string; ranOn?: string },
    pinned: await pinnedBuildOf(handle),
    ran: await buildsThatRan(handle),
  };
}

describe('upgrading workers: deploy beside, ramp, make current, drain, retire', () => {
  it('documents started on A finish on A, new ones start on B, and A drains before it is retired', async () => {
    const A = await workflowBuildId(workflowsPath());
    const first = await sendOne(PHONES.saudiA);
    const second = await sendOne(PHONES.saudiB);

    // 1. Deploy B beside A: it registers, A stays current.
    b = await startWorkerOf(h.service, { workflowsPath: VARIANT, versioned: true });
    const B = b.buildId!;
    expect(B).not.toBe(A);
    let status = await eventually(async () => {
      const s = await workers('status');
      return s.versions.some((v) => v.buildId === B) ? s : undefined;
    }, 30_000);
    expect(status).toMatchObject({ thisBuild: A, current: A, ramping: null, legacyOpenRuns: 0 });
    expect(status.versions.find((v) => v.buildId === A)).toMatchObject({ status: 'current', openRuns: 2 });
    expect(status.versions.find((v) => v.buildId === B)).toMatchObject({ status: 'inactive', openRuns: 0 });

    // 2. Ramp: B takes a share of new runs.
    status = await workers('promote', '--build-id', B, '--ramp', '25');
    expect(status).toMatchObject({ current: A, ramping: { buildId: B, percentage: 25 } });

    // 3. Make B current: new documents start on B.
    status = await workers('promote', '--build-id', B);
    expect(status).toMatchObject({ current: B, ramping: null });
    const third = await sendOne(PHONES.uk);
    expect((await third.approve()).status).toBe(200);
    expect(await approvedResult(third.id)).toMatchObject({
      result: { status: 'approved', ranOn: 'variant' },
      pinned: B,
      ran: [B],
    });

    // The documents of A finish on A, whose worker still runs.
    for (const doc of [first, second]) expect((await doc.approve()).status).toBe(200);
    for (const doc of [first, second]) {
      const { result, pinned, ran } = await approvedResult(doc.id);
      expect(result.status).toBe('approved');
      expect(result.ranOn).toBeUndefined();
      expect({ pinned, ran }).toEqual({ pinned: A, ran: [A] });
    }

    // 4. A drains: no run pinned to it is open.
    status = await eventually(async () => {
      const s = await workers('status');
      return s.versions.find((v) => v.buildId === A)?.drainage === 'drained' ? s : undefined;
    }, 60_000);
    expect(status.versions.find((v) => v.buildId === A)).toMatchObject({ status: 'drained', openRuns: 0 });

    // 5. Retire A's worker: B serves alone.
    await h.service.stopWorker();
    const fourth = await sendOne(PHONES.saudiC);
    expect((await fourth.approve()).status).toBe(200);
    expect(await approvedResult(fourth.id)).toMatchObject({ result: { ranOn: 'variant' }, pinned: B });
  }, 300_000);

  it('refuses a version no worker of it has polled, a ramp that is not a whole percentage, and a missing build id', async () => {
    const refused = async (args: string[]) => {
      const out = await cli(h.service, ['workers', ...args]);
      expect(out.code, out.stdout).not.toBe(0);
      return out;
    };
    const unknown = await refused(['promote', '--build-id', `wf-${'0'.repeat(5000)}`]);
    expect(unknown.stderr).toMatch(/No worker of version wf-0{77}… has polled deployment/);
    expect(unknown.stderr.length).toBeLessThan(2000);
    for (const ramp of ['150', '-1', 'abc', '1e2', '12.5', ''])
      expect((await refused(['promote', '--build-id', 'x', '--ramp', ramp])).stderr).toMatch(/--ramp/);
    expect((await refused(['promote'])).stderr).toMatch(/--build-id/);
    // An option the command does not know is a usage mistake: exit 2, before anything is read.
    expect((await refused(['promote', '--build-id', 'x', '--__proto__', '1'])).code).toBe(2);
    const usage = await refused(['nonsense']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/workers status/);
  });

  it('a new version whose workers poll another task queue is not made current, and the worker says which setting', async () => {
    // B is current and its worker polls the service's task queue; a version on another queue would strand it.
    const otherQueue = `${h.service.taskQueue}-renamed`;
    const third = await startWorkerOf(h.service, {
      workflowsPath: THIRD,
      versioned: true,
      taskQueue: otherQueue,
    });
    try {
      const deployments = workerDeployments({
        connection: h.service.temporal.connection,
        namespace: h.service.config.temporal.namespace,
        deploymentName: h.service.config.temporal.deploymentName,
        taskQueue: otherQueue,
        identity: 'worker-versions test',
      });
      await expect(promoteOnStart(deployments, third.buildId!)).rejects.toThrow(
        new RegExp(
          `poll a task queue this version does not \\(is TEMPORAL_TASK_QUEUE "${otherQueue}" changed\\?\\)`,
        ),
      );
      expect((await workers('status')).current).toBe(b!.buildId);
    } finally {
      await third.stop();
    }
  }, 120_000);
});
