/**
 * What `history.transferProcessorMaxPollRPS` (deploy/temporal/dynamic-config.yaml) does on the production-shaped
 * Temporal (PostgreSQL, 4 shards; test/helpers/production-temporal.ts): `npx tsx bench/transfer-poll.ts
 * [--round-trips 200]`. Two servers at once: one with the file as compose mounts it, one with the same file less that
 * setting (Temporal's default: 20 reads a second per shard). The minimal round trip (a workflow with one activity,
 * bench/round-trip/workflow.ts) runs one at a time, in turn on each, as on an idle server; prints p50 and p99 of each
 * and their ratio.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createLogger } from '../src/logger.ts';
import { locateOrBuildTemporalCli } from '../src/runtime/temporal-cli.ts';
import { connectWorker } from '../src/temporal/worker.ts';
import { installTemporalRuntime } from '../src/temporal/runtime.ts';
import { startProductionTemporal } from '../test/helpers/production-temporal.ts';

const { values: args } = parseArgs({ options: { 'round-trips': { type: 'string', default: '200' } } });
const N = Number(args['round-trips']);
if (!Number.isInteger(N) || N < 10) throw new Error('--round-trips takes a whole number from 10');
const SETTING = 'history.transferProcessorMaxPollRPS';
const ROOT = path.resolve(import.meta.dirname, '..');

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

interface Side {
  client: Client;
  times: number[];
  stop(): Promise<void>;
}

/** A server with `dynamicConfig`, a worker for the round trip on it, and a client. */
async function side(dir: string, cliPath: string, dynamicConfig: string): Promise<Side> {
  const server = await startProductionTemporal({ dir, cliPath, dynamicConfig });
  const connection = await Connection.connect({ address: server.address });
  const worker = await Worker.create({
    connection: await connectWorker({ address: server.address }),
    namespace: 'default',
    taskQueue: 'transfer-poll',
    workflowsPath: path.join(ROOT, 'bench/round-trip/workflow.ts'),
    activities: { roundTripActivity: (n: number) => Promise.resolve(n) },
  });
  const running = worker.run();
  return {
    client: new Client({ connection, namespace: 'default' }),
    times: [],
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await server.stop();
    },
  };
}

async function roundTrip(s: Side, id: string, keep: boolean): Promise<void> {
  const t = performance.now();
  await s.client.workflow.execute('roundTripWorkflow', {
    workflowId: id,
    taskQueue: 'transfer-poll',
    args: [1],
  });
  if (keep) s.times.push(performance.now() - t);
}

async function main() {
  const logger = createLogger({ logLevel: 'warn' });
  installTemporalRuntime(logger);
  const cliPath = await locateOrBuildTemporalCli(process.env.TEMPORAL_CLI_PATH, logger);
  if (!cliPath) throw new Error('the namespace set-up needs the Temporal CLI: install Go');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-transfer-poll-'));
  await chmod(dir, 0o755);
  try {
    const file = path.join(ROOT, 'deploy/temporal/dynamic-config.yaml');
    const text = await readFile(file, 'utf8');
    const without = text.replace(new RegExp(`^${SETTING.replace(/\./g, '\\.')}:\\n(  .*\\n)+`, 'm'), '');
    if (without === text) throw new Error(`${SETTING} is not in ${file}`);
    const withoutFile = path.join(dir, 'without.yaml');
    await writeFile(withoutFile, without);

    // Both servers run at once and take turns, so a change in the machine's load falls on both alike.
    const on = await side(path.join(dir, 'with'), cliPath, file);
    const off = await side(path.join(dir, 'without'), cliPath, withoutFile);
    try {
      const run = randomBytes(4).toString('hex');
      for (let i = 0; i < N + 20; i++) {
        // The first 20 of each warm the caches up.
        await roundTrip(on, `transfer-poll-${run}-on-${i}`, i >= 20);
        await roundTrip(off, `transfer-poll-${run}-off-${i}`, i >= 20);
      }
    } finally {
      await on.stop();
      await off.stop();
    }
    const sorted = (x: Side) => [...x.times].sort((a, b) => a - b);
    const line = (label: string, ms: number[]) =>
      `  ${label.padEnd(40)} p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms`;
    console.log(
      `\n${SETTING} on the production-shaped Temporal: ${N} round trips one at a time, ${os.cpus().length} cores`,
    );
    console.log(line('deploy/temporal/dynamic-config.yaml', sorted(on)));
    console.log(line(`the same without ${SETTING}`, sorted(off)));
    console.log(
      `  the setting makes a round trip ${(percentile(sorted(off), 50) / percentile(sorted(on), 50)).toFixed(2)}× as fast at p50`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
