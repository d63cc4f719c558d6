import { cliWorkerDeployments, workersPromote, workersStatus } from '../../runtime/workers-command.ts';
import type { CliCommand, CliContext } from '../command.ts';

// Both print the deployment as JSON whatever --json says: the upgrade procedure's scripts read it.
const printJson = (ctx: CliContext, data: unknown) => ctx.io.out(`${JSON.stringify(data, null, 2)}\n`);

export const workerCommands: CliCommand[] = [
  {
    words: ['workers', 'status'],
    synopsis: '',
    summary: 'The worker deployment: its versions, which is current or ramping, their open runs; prints JSON',
    details: `The deployment is TEMPORAL_DEPLOYMENT_NAME. Shows each version, which is current or ramping, its
drainage and the open runs pinned to it; this checkout's build id; the open runs of the legacy approval type
(its code can go once that is 0). docs/operations.md, "Upgrading workflow code", says how to use it.`,
    options: {},
    positionals: { min: 0, max: 0 },
    async run(ctx) {
      const config = ctx.config();
      const status = await ctx.withTemporal((t) => workersStatus(cliWorkerDeployments(config, t.connection)));
      printJson(ctx, status);
      return 0;
    },
  },
  {
    words: ['workers', 'promote'],
    synopsis: '--build-id ID [--ramp N]',
    summary: 'Make a worker version current, or give it N % of new runs; prints JSON',
    details: `Make version ID current (new runs start on it; runs pinned to others stay there), or with --ramp give
it N % of new runs (0 ends a ramp). Only a version whose workers have polled can be promoted.`,
    options: { 'build-id': { type: 'string' }, ramp: { type: 'string' } },
    positionals: { min: 0, max: 0 },
    async run(ctx, { values }) {
      const config = ctx.config();
      const options = {
        buildId: typeof values['build-id'] === 'string' ? values['build-id'] : undefined,
        ramp: typeof values.ramp === 'string' ? values.ramp : undefined,
      };
      const status = await ctx.withTemporal((t) =>
        workersPromote(cliWorkerDeployments(config, t.connection), options),
      );
      printJson(ctx, status);
      return 0;
    },
  },
];
