/**
 * Benchmark of `npm start` to healthy: `npx tsx bench/start.ts` (or `npm run bench:start`).
 *
 * Runs `npm start` (embedded PostgreSQL, Temporal dev server, worker and API in one process) in a fresh DATA_DIR,
 * times it from spawn to the first 200 of GET /api/v1/health, stops it with SIGINT, and does it again in the same
 * DATA_DIR: the first start is cold (initdb, migrations, workflow bundle made and cached), the next warm (the data
 * folders exist, the migrations are applied, the cached bundle is reused). BENCH_STARTS (default 3) sets how many
 * starts in all; the warm figure is the median of the warm ones. Target: warm ≤ 5 s.
 *
 * Each start also prints how long the banner took (everything up, the worker polling: the API answers /health
 * before the worker is up), each step src/main.ts logged (`startup timings`) with the CPU time the Wathiq process
 * had used by then, and the run prints the warm median of that CPU time until the API listened (what a start costs
 * whatever the machine's load) and the load average before and after.
 *
 * `npm start` runs src/ compiled by scripts/start.mjs into node_modules/.cache/wathiq, outside DATA_DIR: the cold
 * start here is a fresh DATA_DIR, not a fresh compile (the first start after any change to src/ compiles all of it
 * again: 0.7 s of CPU, 2.5–3.5 s on a busy machine).
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/setup/free-port.ts';

const STARTS = Math.max(2, Number(process.env.BENCH_STARTS ?? 3));
const TARGET_SECONDS = 5;
const GIVE_UP_MS = 180_000;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Step {
  /** Seconds from spawning `npm start`. */
  wall: number;
  /** CPU seconds the Wathiq process (not npm, PostgreSQL or Temporal) had used by then. */
  cpu?: number;
}

interface Start {
  healthySeconds: number;
  bannerSeconds: number;
  /** Each step src/main.ts marked (its `startup timings` line), and the first 200 of /health, in time order. */
  steps: Record<string, Step>;
}

/** The `startup timings` line main.ts logs once up: its steps moved from the node process's clock to the spawn's. */
function stepsOf(output: string, spawnedAt: number): Record<string, Step> {
  for (const line of output.split('\n')) {
    if (!line.includes('"startup timings"')) continue;
    try {
      const timings = JSON.parse(line) as {
        startup_ms: Record<string, number>;
        startup_cpu_ms: Record<string, number>;
        time_origin: number;
      };
      return {
        'node process began': { wall: (timings.time_origin - spawnedAt) / 1000 },
        ...Object.fromEntries(
          Object.entries(timings.startup_ms).map(([step, ms]) => [
            step,
            {
              wall: (timings.time_origin + ms - spawnedAt) / 1000,
              cpu: (timings.startup_cpu_ms[step] ?? Number.NaN) / 1000,
            },
          ]),
        ),
      };
    } catch {
      return {};
    }
  }
  return {};
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function startOnce(dataDir: string): Promise<Start> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'info', // the `startup timings` line
    DATA_DIR: dataDir,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://localhost:${port}`,
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    TEMPORAL_DEV_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    METRICS_PORT: 'off',
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  const spawnedAt = performance.timeOrigin + performance.now();
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let bannerSeconds: number | undefined;
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (bannerSeconds === undefined && output.includes('Wathiq is running'))
      bannerSeconds = (performance.now() - started) / 1000;
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  try {
    let healthySeconds: number | undefined;
    while (healthySeconds === undefined) {
      if (exited) throw new Error(`npm start exited before it was healthy:\n${output}`);
      if (performance.now() - started > GIVE_UP_MS) throw new Error(`not healthy in time:\n${output}`);
      const healthy = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (healthy) healthySeconds = (performance.now() - started) / 1000;
      else await new Promise((r) => setTimeout(r, 50));
    }
    while (bannerSeconds === undefined && !exited && performance.now() - started < GIVE_UP_MS)
      await new Promise((r) => setTimeout(r, 50));
    // The timings line follows the banner.
    const deadline = performance.now() + 10_000;
    while (!output.includes('"startup timings"') && !exited && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    return {
      healthySeconds,
      bannerSeconds: bannerSeconds ?? Number.NaN,
      steps: Object.fromEntries(
        Object.entries({
          ...stepsOf(output, spawnedAt),
          'GET /health 200': { wall: healthySeconds },
        }).sort(([, a], [, b]) => a.wall - b.wall),
      ),
    };
  } finally {
    // The whole group (npm, tsx, node): main.ts stops the worker, the API, Temporal and PostgreSQL in order.
    if (!exited) process.kill(-child.pid!, 'SIGINT');
    await Promise.race([exit, new Promise((r) => setTimeout(r, 60_000))]);
    if (!exited) process.kill(-child.pid!, 'SIGKILL');
  }
}

async function main(): Promise<void> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bench-start-'));
  await chmod(scratch, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ');
  const loadBefore = load();
  try {
    const starts: Start[] = [];
    for (let i = 0; i < STARTS; i++) {
      const s = await startOnce(path.join(scratch, 'data'));
      starts.push(s);
      process.stdout.write(
        `start ${i + 1} (${i === 0 ? 'cold' : 'warm'}): healthy after ${s.healthySeconds.toFixed(2)} s, banner after ${s.bannerSeconds.toFixed(2)} s\n` +
          Object.entries(s.steps)
            .map(
              ([step, { wall, cpu }]) =>
                `    ${wall.toFixed(2).padStart(6)} s  ${cpu === undefined ? '         ' : `(${cpu.toFixed(2)} cpu)`}  ${step}\n`,
            )
            .join(''),
      );
    }
    const warm = median(starts.slice(1).map((s) => s.healthySeconds));
    const cold = starts[0]!.healthySeconds;
    // The Wathiq process's own CPU time until its API listened: what a start costs, whatever the machine's load.
    const warmCpu = median(starts.slice(1).map((s) => s.steps['api listening']?.cpu ?? Number.NaN));
    process.stdout.write(
      `\nnpm start to healthy on ${os.cpus().length} CPUs: cold ${cold.toFixed(2)} s, warm ${warm.toFixed(2)} s (median of ${starts.length - 1})\n` +
        `Warm: the Wathiq process used ${warmCpu.toFixed(2)} s of CPU until its API listened (median)\n` +
        `Target: warm ≤ ${TARGET_SECONDS} s — ${warm <= TARGET_SECONDS ? 'met' : 'MISSED'} (${(warm / TARGET_SECONDS).toFixed(2)}× the target)\n` +
        `Load average (1, 5, 15 min): ${loadBefore} before the run, ${load()} after\n`,
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
