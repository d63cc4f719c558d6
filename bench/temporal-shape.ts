import path from 'node:path';
import type { Logger } from '../src/logger.ts';
import { locateOrBuildTemporalCli } from '../src/runtime/temporal-cli.ts';
import { startTemporalDevServer } from '../src/runtime/temporal-dev-server.ts';
import { freePort } from '../test/setup/free-port.ts';
import { startProductionTemporal } from '../test/helpers/production-temporal.ts';

/**
 * The Temporal a benchmark runs on (`--temporal <shape>`):
 * - `development` (the default): the CLI's dev server as `npm start` runs it (src/runtime/infrastructure.ts): one
 *   process, one history shard, its state in a SQLite file, so that workflows survive a restart of the tree;
 * - `development-in-memory`: the same server with its SQLite in memory, as the test suite runs it and as this
 *   benchmark's `development` ran it until 2026-12-06. Nothing is written to disk, so a restart loses every
 *   workflow: no deployment runs it, and its round trip is the cheapest a Temporal can be;
 * - `production`: the production-shaped server of the fault tests (PostgreSQL persistence of its own, 4 history
 *   shards; test/helpers/production-temporal.ts).
 */
export const BENCH_TEMPORAL_SHAPES = ['development', 'development-in-memory', 'production'] as const;
export type BenchTemporalShape = (typeof BENCH_TEMPORAL_SHAPES)[number];

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
  if (!(BENCH_TEMPORAL_SHAPES as readonly string[]).includes(value))
    throw new Error(`--temporal takes ${BENCH_TEMPORAL_SHAPES.join(', ')}, not ${value}`);
  return value as BenchTemporalShape;
}

export async function startBenchTemporal(
  shape: BenchTemporalShape,
  dir: string,
  logger: Logger,
): Promise<BenchTemporal> {
  if (shape !== 'production') {
    const inMemory = shape === 'development-in-memory';
    const dev = await startTemporalDevServer({
      port: await freePort(),
      uiPort: await freePort(),
      namespace: 'default',
      // Where `npm start` keeps it: DATA_DIR/temporal/temporal.db.
      ...(!inMemory && { dbFile: path.join(dir, 'temporal', 'temporal.db') }),
      logger,
    });
    return {
      address: dev.address,
      label: inMemory
        ? 'Temporal dev server (SQLite in memory)'
        : 'Temporal dev server (SQLite file, as npm start runs it)',
      stop: () => dev.stop(),
    };
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
