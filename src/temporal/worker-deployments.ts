import { isGrpcServiceError, type Connection } from '@temporalio/client';

/**
 * One Worker Deployment as Temporal keeps it: its versions (one per build id that polled), which one new workflow
 * runs start on (`current`, and a `ramping` one taking a share of them), and how far each earlier version has
 * drained (no open run pinned to it any more). Wathiq's workers all join one deployment (TEMPORAL_DEPLOYMENT_NAME);
 * each version is named by the workflow code it runs (workflowBuildId).
 */
export type VersionStatus = (typeof STATUSES)[number];

export interface DeploymentVersion {
  buildId: string;
  status: VersionStatus;
  /** Set once the version stopped being current: `draining` while runs pinned to it are open, then `drained`. */
  drainage: 'draining' | 'drained' | null;
  createdAt: string | null;
  currentSince: string | null;
  rampingSince: string | null;
}

export interface DeploymentState {
  name: string;
  current: string | null;
  ramping: { buildId: string; percentage: number } | null;
  versions: DeploymentVersion[];
}

// The enums' numbers (temporal.api.enums.v1), as the gRPC answer carries them, or their names once decoded.
const STATUSES = ['unspecified', 'inactive', 'current', 'ramping', 'draining', 'drained', 'created'] as const;
const DRAINAGE = ['unspecified', 'draining', 'drained'] as const;

function enumName<T extends string>(value: unknown, names: readonly T[], prefix: string): T | 'unspecified' {
  const name =
    typeof value === 'number'
      ? names[value]
      : typeof value === 'string'
        ? value.replace(prefix, '').toLowerCase()
        : '';
  return names.includes(name as T) ? (name as T) : 'unspecified';
}

type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;
const iso = (t: Timestamp): string | null =>
  t?.seconds == null ? null : new Date(Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6).toISOString();

type DeploymentInfo = NonNullable<
  Awaited<ReturnType<Connection['workflowService']['describeWorkerDeployment']>>['workerDeploymentInfo']
>;

/** The deployment as Temporal describes it, in the names `workers status` prints. */
function deploymentState(name: string, info: DeploymentInfo | null | undefined): DeploymentState {
  const routing = info?.routingConfig;
  const versions = (info?.versionSummaries ?? []).map((v): DeploymentVersion => {
    const drainage = enumName(
      v.drainageStatus ?? v.drainageInfo?.status,
      DRAINAGE,
      'VERSION_DRAINAGE_STATUS_',
    );
    return {
      buildId: v.deploymentVersion?.buildId ?? '',
      status: enumName(v.status, STATUSES, 'WORKER_DEPLOYMENT_VERSION_STATUS_'),
      drainage: drainage === 'unspecified' ? null : drainage,
      createdAt: iso(v.createTime),
      currentSince: iso(v.currentSinceTime),
      rampingSince: iso(v.rampingSinceTime),
    };
  });
  const rampingBuild = routing?.rampingDeploymentVersion?.buildId;
  return {
    name,
    current: routing?.currentDeploymentVersion?.buildId ?? null,
    ramping: rampingBuild
      ? { buildId: rampingBuild, percentage: routing?.rampingVersionPercentage ?? 0 }
      : null,
    versions,
  };
}

const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;

/** The deployment's operations, as the worker (promotion at start) and the operator's CLI use them. */
export function workerDeployments(options: {
  connection: Connection;
  namespace: string;
  deploymentName: string;
  /** The task queue the deployment's workers poll: the runs counted by type are its own. */
  taskQueue: string;
  /** Who changed the routing, as Temporal records it (`lastModifierIdentity`). */
  identity: string;
}) {
  const { connection, namespace, deploymentName, taskQueue, identity } = options;
  const service = connection.workflowService;
  const countRuns = async (query: string): Promise<number> =>
    Number((await service.countWorkflowExecutions({ namespace, query })).count ?? 0);

  return {
    deploymentName,

    /** The deployment, or undefined when no versioned worker of it has polled yet. */
    async describe(): Promise<DeploymentState | undefined> {
      let info;
      try {
        info = (await service.describeWorkerDeployment({ namespace, deploymentName })).workerDeploymentInfo;
      } catch (err) {
        if (isGrpcServiceError(err) && Number(err.code) === GRPC_NOT_FOUND) return undefined;
        throw err;
      }
      return deploymentState(deploymentName, info);
    },

    /** New runs start on `buildId` from now on; runs pinned to other versions stay where they are. */
    async setCurrent(buildId: string): Promise<void> {
      try {
        await service.setWorkerDeploymentCurrentVersion({ namespace, deploymentName, buildId, identity });
      } catch (err) {
        if (isGrpcServiceError(err) && Number(err.code) === GRPC_FAILED_PRECONDITION)
          throw new Error(
            `Temporal refused to make version ${buildId} current in deployment "${deploymentName}": ${err.details}. ` +
              `The current version's workers poll a task queue this version does not (is TEMPORAL_TASK_QUEUE ` +
              `"${taskQueue}" changed?). Give a new task queue its own TEMPORAL_DEPLOYMENT_NAME, or keep the old one.`,
            { cause: err },
          );
        throw err;
      }
    },

    /** `percentage` of new runs start on `buildId`, the rest on the current version; 0 ends the ramp. */
    async setRamping(buildId: string, percentage: number): Promise<void> {
      await service.setWorkerDeploymentRampingVersion({
        namespace,
        deploymentName,
        ...(percentage > 0 ? { buildId, percentage } : { buildId: '', percentage: 0 }),
        identity,
      });
    },

    /** The open runs pinned to `buildId` (what keeps its workers needed; one that auto-upgrades moves on). */
    openRunsOf(buildId: string): Promise<number> {
      return countRuns(
        `TemporalWorkerDeploymentVersion="${deploymentName}:${buildId}" AND TemporalWorkflowVersioningBehavior="Pinned" AND ExecutionStatus="Running"`,
      );
    },

    /** The open runs of a workflow type on the task queue, whatever version they are on (or none). */
    openRunsOfType(workflowType: string): Promise<number> {
      return countRuns(
        `WorkflowType="${workflowType}" AND TaskQueue="${taskQueue}" AND ExecutionStatus="Running"`,
      );
    },
  };
}

export type WorkerDeployments = ReturnType<typeof workerDeployments>;

/**
 * What a worker that promotes its own version does when it starts: once Temporal knows the version (it registers
 * when the worker first polls), it becomes current if it never was current or ramping — a new deploy. A restarted
 * worker of a version that was current before (or the previous version's worker kept for draining) changes
 * nothing, so an older build never takes new runs back; that is an operator's `workers promote`.
 */
export async function promoteOnStart(
  deployments: WorkerDeployments,
  buildId: string,
  options: { timeoutMs?: number; pollMs?: number } = {},
): Promise<'promoted' | 'unchanged'> {
  const until = Date.now() + (options.timeoutMs ?? 60_000);
  const pause = () => new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
  // The version registers with the worker's first poll, a moment after it starts: no need to ask before.
  await pause();
  for (;;) {
    const state = await deployments.describe();
    const mine = state?.versions.find((v) => v.buildId === buildId);
    if (mine) {
      const neverRouted = mine.status === 'inactive' || mine.status === 'created';
      if (state?.current === buildId || !neverRouted) return 'unchanged';
      await deployments.setCurrent(buildId);
      return 'promoted';
    }
    if (Date.now() > until)
      throw new Error(
        `worker version ${buildId} did not register with deployment ${deployments.deploymentName}`,
      );
    await pause();
  }
}
