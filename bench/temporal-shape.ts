import path from 'node:path';
import type { Logger } from '../src/logger.ts';
import { locateOrBuildTemporalCli } from '../src/runtime/temporal-cli.ts';
import { startTemporalDevServer } from '../src/runtime/temporal-dev-server.ts';
import { freePort } from '../test/setup/free-port.ts';
import { startProductionTemporal } from '../test/helpers/production-temporal.ts';

/**
 * The Temporal a benchmark runs on (`--temporal development|production`): the CLI's dev server that `npm start`
 * runs (one process, SQLite in memory, one history shard), or the production-shaped server of the fault tests
 * (PostgreSQL persistence of its own, 4 history shards; test/helpers/production-temporal.ts).
 */
export type BenchTemporalShape = 'development' | 'production';

export interface BenchTemporal {
  address: string;
  /** What the CPU line calls it. */
  label: string;
  /** The server's process (the dev server is found by its command line, as it runs under the CLI). */
  pid?: number;
  /** The command line of the server's PostgreSQL postmaster, counted with its backends as Temporal's CPU (production shape). */
  postgresPattern?: RegExp;
  stop(): Promise<void>;
}

export function parseTemporalShape(value: string): BenchTemporalShape {
  if (value !== 'development' && value !== 'production')
    throw new Error(`--temporal takes development or production, not ${value}`);
  return value;
}

export async function startBenchTemporal(
  shape: BenchTemporalShape,
  dir: string,
  logger: Logger,
): Promise<BenchTemporal> {
  if (shape === 'development') {
    const dev = await startTemporalDevServer({
      port: await freePort(),
      uiPort: await freePort(),
      namespace: 'default',
      logger,
    });
    return { address: dev.address, label: 'Temporal dev server', stop: () => dev.stop() };
  }
  const cliPath = await locateOrBuildTemporalCli(process.env.TEMPORAL_CLI_PATH, logger);
  if (!cliPath)
    throw new Error('the production shape needs the Temporal CLI (its namespace set-up): install Go');
  const dir_ = path.join(dir, 'temporal');
  const server = await startProductionTemporal({ dir: dir_, cliPath });
  return {
    address: server.address,
    label: 'Temporal server (4 shards) + its PostgreSQL',
    pid: server.process.pid,
    // Its postmaster names its data folder; its backends are the postmaster's children.
    postgresPattern: new RegExp(`postgres -D ${path.join(dir_, 'temporal-postgres', 'data')} `),
    stop: () => server.stop(),
  };
}
