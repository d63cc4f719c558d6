import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { createActivities } from '../../src/activities/index.ts';
import { createWorkerDeps } from '../../src/runtime/worker-deps.ts';
import { createWorker } from '../../src/temporal/worker.ts';
import { workflowBuildId } from '../../src/temporal/workflow-build-id.ts';
import { approvalStart, createApprovalClient } from '../../src/features/approval/client.ts';
import { LEGACY_APPROVAL_WORKFLOW_TYPE } from '../../src/features/approval/definitions.ts';
import { sendDocument } from '../../src/features/approval/send-document.ts';
import type { TestService } from './test-service.ts';

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

export interface ExtraWorker {
  /** Its build id, when versioned. */
  buildId?: string;
  worker: Worker;
  stop(): Promise<void>;
}

/**
 * Another worker on the service's task queue, as a second deployment of the service would run one: the workflow
 * code at `workflowsPath`, the service's activities, and — `versioned` — its version in the service's deployment
 * (named by that code, not made current: `workers promote` does that). Unversioned, it is a worker of a release
 * before worker versioning.
 */
export async function startWorkerOf(
  service: TestService,
  options: { workflowsPath: string; versioned: boolean; taskQueue?: string },
): Promise<ExtraWorker> {
  const buildId = options.versioned ? await workflowBuildId(options.workflowsPath) : undefined;
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    connection,
    namespace: service.config.temporal.namespace,
    taskQueue: options.taskQueue ?? service.taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: options.workflowsPath, logger: silent }),
    activities: createActivities(createWorkerDeps(service.config, service.database.db, service.logger)),
    ...(buildId && { version: { deploymentName: service.config.temporal.deploymentName, buildId } }),
    extra: { stickyQueueScheduleToStartTimeout: '1s' },
  });
  const running = worker.run();
  return {
    ...(buildId && { buildId }),
    worker,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** The version a run is pinned to (its build id), or undefined while it is on no version. */
export async function pinnedBuildOf(handle: WorkflowHandle): Promise<string | undefined> {
  const info = (await handle.describe()).raw.workflowExecutionInfo as {
    versioningInfo?: { behavior?: unknown; deploymentVersion?: { buildId?: string } | null } | null;
  };
  return info.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

/** The build ids that completed the run's workflow tasks, in order, each once. */
export async function buildsThatRan(handle: WorkflowHandle): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const builds: string[] = [];
  for (const e of events) {
    const done = e.workflowTaskCompletedEventAttributes;
    if (!done) continue;
    const build = done.deploymentVersion?.buildId || '(unversioned)';
    if (builds.at(-1) !== build) builds.push(build);
  }
  return builds;
}

/**
 * POST /documents/{id}/send as the API of the last release before worker versioning did it: the same send, the
 * workflow type of then (`approvalWorkflow`), which a worker of that release runs.
 */
export async function sendAsBeforeVersioning(
  h: { service: TestService; account: { accountId: string } },
  documentId: string,
): Promise<void> {
  const { client } = h.service.temporal;
  const approvals = createApprovalClient({ client, taskQueue: h.service.taskQueue });
  await sendDocument(
    {
      db: h.service.database.db,
      secrets: h.service.deps.secrets,
      approvals: {
        ...approvals,
        async start(document, approvers, accountReminders = null) {
          const options = approvalStart(document, approvers, {
            taskQueue: h.service.taskQueue,
            accountReminders,
          });
          await client.workflow.start(LEGACY_APPROVAL_WORKFLOW_TYPE, options);
        },
      },
    },
    h.account.accountId,
    documentId,
  );
}
