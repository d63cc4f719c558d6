import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestService } from './test-service.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `npm run cli -- <args>` as an operator runs it: a real process, against the test service's database, Temporal
 * server, namespace, task queue and worker deployment. It runs the sources under tsx, not compiled as
 * bin/wathiq.mjs runs them: the test service's workers run the sources, and the CLI's own build id (`workers status`,
 * `thisBuild`) must be theirs, which compiled code's is not (src/temporal/workflow-build-id.ts).
 */
export function cli(service: TestService, args: readonly string[]): Promise<CliOutcome> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: service.database.url,
      TEMPORAL_ADDRESS: service.config.temporal.address!,
      TEMPORAL_NAMESPACE: service.config.temporal.namespace,
      TEMPORAL_TASK_QUEUE: service.taskQueue,
      TEMPORAL_DEPLOYMENT_NAME: service.config.temporal.deploymentName,
    },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: CliOutcome) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

/** `npm run cli -- documents:retry-finalization <arg>`. */
export const retryFinalizationCli = (service: TestService, arg: string): Promise<CliOutcome> =>
  cli(service, ['documents:retry-finalization', arg]);
