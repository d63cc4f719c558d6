import { hostname } from 'node:os';
import type { Connection } from '@temporalio/client';
import type { Config } from '../config.ts';
import { AppError, newDetails, addDetail } from '../errors.ts';
import { LEGACY_APPROVAL_WORKFLOW_TYPE } from '../features/approval/definitions.ts';
import { workflowsPath } from '../temporal/worker.ts';
import {
  workerDeployments,
  type DeploymentState,
  type WorkerDeployments,
} from '../temporal/worker-deployments.ts';
import { workflowBuildId } from '../temporal/workflow-build-id.ts';

/** What `workers status` prints. */
export interface WorkersStatus {
  deployment: string;
  /** The build id of the workflow code this command runs from (the version its worker would register). */
  thisBuild: string;
  current: string | null;
  ramping: DeploymentState['ramping'];
  versions: (DeploymentState['versions'][number] & { openRuns: number })[];
  /** Runs of the workflow type started before worker versioning: its code can go once this is 0. */
  legacyOpenRuns: number;
}

export async function workersStatus(deployments: WorkerDeployments): Promise<WorkersStatus> {
  const [state, thisBuild, legacyOpenRuns] = await Promise.all([
    deployments.describe(),
    workflowBuildId(workflowsPath()),
    deployments.openRunsOfType(LEGACY_APPROVAL_WORKFLOW_TYPE),
  ]);
  const versions = await Promise.all(
    (state?.versions ?? []).map(async (v) => ({ ...v, openRuns: await deployments.openRunsOf(v.buildId) })),
  );
  return {
    deployment: deployments.deploymentName,
    thisBuild,
    current: state?.current ?? null,
    ramping: state?.ramping ?? null,
    versions,
    legacyOpenRuns,
  };
}

const refused = (option: string, message: string): AppError => {
  const details = newDetails();
  addDetail(details, option, message);
  return AppError.validation(details);
};

/** `--ramp N`: a whole percentage from 0 to 100. */
function rampOf(value: string): number {
  if (!/^\d{1,3}$/.test(value) || Number(value) > 100)
    throw refused('--ramp', 'a whole percentage from 0 to 100');
  return Number(value);
}

export async function workersPromote(
  deployments: WorkerDeployments,
  options: { buildId?: string; ramp?: string },
): Promise<WorkersStatus> {
  const buildId = options.buildId;
  if (!buildId) throw refused('--build-id', 'required: the version to promote (`workers status` lists them)');
  const ramp = options.ramp === undefined ? undefined : rampOf(options.ramp);
  const state = await deployments.describe();
  // Only a version whose workers have polled: Temporal would route runs to a version nobody serves.
  if (!state?.versions.some((v) => v.buildId === buildId)) {
    const known = state?.versions.map((v) => v.buildId).join(', ') || 'none';
    throw new AppError(
      'not_found',
      `No worker of version ${buildId.length > 80 ? `${buildId.slice(0, 80)}…` : buildId} has polled deployment ${deployments.deploymentName} (its versions: ${known})`,
    );
  }
  if (ramp === undefined) await deployments.setCurrent(buildId);
  else await deployments.setRamping(buildId, ramp);
  return workersStatus(deployments);
}

/** The worker deployment this configuration names (TEMPORAL_DEPLOYMENT_NAME), as the CLI sees it. */
export function cliWorkerDeployments(config: Config, connection: Connection): WorkerDeployments {
  return workerDeployments({
    connection,
    namespace: config.temporal.namespace,
    deploymentName: config.temporal.deploymentName,
    taskQueue: config.temporal.taskQueue,
    identity: `wathiq cli ${hostname()}`,
  });
}
