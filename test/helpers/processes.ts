import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { inject } from 'vitest';
import { devServerConfigFlags, searchAttributeFlags } from '../../src/runtime/temporal-dev-server.ts';
import { seedPageAssets } from '../setup/page-assets-seed.ts';
import { seedWorkflowBundle } from '../setup/workflow-bundle-seed.ts';

/**
 * Real processes for fault tests: `src/main.ts api` / `src/main.ts worker` as child processes (as deployed with
 * `npm run start:api` / `start:worker`), a Temporal dev server of the test's own, and signals to kill them.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Every child still running when the test process ends is killed, so a failed test leaves nothing behind. */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface RunningProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  readonly exited: Promise<number | string>;
  /** Sends `signal` and waits for the process to end. */
  kill(signal: NodeJS.Signals): Promise<number | string>;
}

/** Follows a child process: its output, its end, and a kill when this process ends. */
export function track(name: string, child: ChildProcess): RunningProcess {
  children.add(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  return {
    name,
    child,
    pid: child.pid!,
    output: () => out,
    exited,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Waits until `ready` says so; fails (and kills `p`) when it exits first or the time runs out. */
export async function waitFor(
  p: RunningProcess,
  ready: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (p.child.exitCode !== null || p.child.signalCode !== null)
      throw new Error(`${p.name} exited before ${what}:\n${outputTail(p.output())}`);
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  await p.kill('SIGKILL');
  throw new Error(`${p.name}: no ${what} within ${timeoutMs} ms:\n${outputTail(p.output())}`);
}

/**
 * The end of a process's output for an error, each line cut to its start: a Go server's fatal log line is one JSON
 * object whose message and error come first and whose stack trace alone would fill the whole tail.
 */
export function outputTail(output: string, chars = 4000, lineChars = 600): string {
  return output
    .split('\n')
    .map((line) =>
      line.length > lineChars ? `${line.slice(0, lineChars)}… (${line.length} characters)` : line,
    )
    .join('\n')
    .slice(-chars);
}

/**
 * Starts one role of Wathiq as its own process (`node --import tsx src/main.ts <role>`) with `env` on top of this
 * process's environment, and waits for its "Wathiq is running" banner. A worker finds the run's workflow bundle in
 * its DATA_DIR (seedWorkflowBundle), an API the page assets' compressed forms (seedPageAssets); one that must bundle
 * takes a while on a loaded machine, hence the generous time-out. With `main`, a built app runs instead:
 * `node <main> <role>`, from the folder above the one holding main.js (the image's /app for /app/dist/main.js).
 */
export async function startRole(
  role: 'api' | 'worker',
  env: Record<string, string>,
  options: { name?: string; timeoutMs?: number; main?: string } = {},
): Promise<RunningProcess> {
  const args = options.main ? [options.main, role] : ['--import', 'tsx', 'src/main.ts', role];
  // A built app bundles other sources (dist/), for which the run's bundle is no cache; its build made the page
  // assets' compressed forms (dist/precompressed).
  if (role === 'worker' && !options.main && env.DATA_DIR)
    await seedWorkflowBundle(inject('workflowBundleCache'), env.DATA_DIR);
  if (role === 'api' && !options.main && env.DATA_DIR)
    await seedPageAssets(inject('pageAssetCache'), env.DATA_DIR);
  const child = spawn(process.execPath, args, {
    cwd: options.main ? path.resolve(path.dirname(options.main), '..') : ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p = track(options.name ?? role, child);
  await waitFor(p, () => p.output().includes('Wathiq is running'), options.timeoutMs ?? 120_000, 'banner');
  return p;
}

export interface TemporalServer {
  address: string;
  port: number;
  process: RunningProcess;
  /** Starts the server again on the same port and SQLite file (after a kill). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** True once the frontend answers a health check. */
export async function temporalAnswers(address: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: '1 second' });
    try {
      await connection.healthService.check({});
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}

/**
 * A Temporal dev server of the test's own (`temporal server start-dev`), its state in a SQLite file so workflows
 * survive a kill, headless, with Wathiq's search attributes.
 */
export async function startTemporalServer(options: {
  cliPath: string;
  port: number;
  dbFile: string;
}): Promise<TemporalServer> {
  const address = `127.0.0.1:${options.port}`;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--headless',
    '--db-filename',
    options.dbFile,
    '--log-level',
    'error',
    ...searchAttributeFlags(),
    ...devServerConfigFlags(),
  ];
  const launch = async () => {
    const p = track('temporal', spawn(options.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    await waitFor(p, () => temporalAnswers(address), 60_000, 'answer on its frontend');
    return p;
  };
  const server: TemporalServer = {
    address,
    port: options.port,
    process: await launch(),
    async restart() {
      server.process = await launch();
    },
    async stop() {
      await server.process.kill('SIGTERM');
    },
  };
  return server;
}

/** The postmaster's pid, from the first line of `postmaster.pid` in the data folder. */
export async function postmasterPid(dataDir: string): Promise<number> {
  const text = await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8');
  return Number(text.split('\n')[0]);
}

/**
 * True while a process with this pid exists. A pid that is no positive integer is refused: `kill(0, 0)` would
 * signal our own process group and answer true (a pid file read while PostgreSQL was still writing it reads 0).
 */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`not a process id: ${pid}`);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface WathiqEnvOptions {
  databaseUrl: string;
  temporalAddress: string;
  taskQueue: string;
  dataDir: string;
  whatsapp: { apiUrl: string; phoneNumberId: string; accessToken: string; appSecret: string };
  signing: { p12Path: string; p12Password: string };
  /** Where the finalization asks for a time-stamp, when the test wants to hold it. */
  tsaUrl?: string;
}

/**
 * What a role process needs in a fault test: shared PostgreSQL and Temporal, the Cloud API provider pointed at the
 * fake Graph API, a test CA's signing certificate, webhooks to loopback receivers, fast webhook retries.
 * PORT and PUBLIC_BASE_URL are each API's own.
 */
export function wathiqEnv(o: WathiqEnvOptions): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATA_DIR: o.dataDir,
    DATABASE_URL: o.databaseUrl,
    DATABASE_POOL_MAX: '5',
    TEMPORAL_ADDRESS: o.temporalAddress,
    TEMPORAL_TASK_QUEUE: o.taskQueue,
    // A deployment of its own per test: tests share one Temporal, and a deployment's current version that polls
    // another test's task queue refuses to hand over to a version that does not (FAILED_PRECONDITION).
    TEMPORAL_DEPLOYMENT_NAME: `test-${o.taskQueue}`,
    WHATSAPP_PROVIDER: 'cloud',
    WHATSAPP_API_URL: o.whatsapp.apiUrl,
    WHATSAPP_PHONE_NUMBER_ID: o.whatsapp.phoneNumberId,
    WHATSAPP_ACCESS_TOKEN: o.whatsapp.accessToken,
    WHATSAPP_APP_SECRET: o.whatsapp.appSecret,
    WHATSAPP_VERIFY_TOKEN: 'verify-me',
    SIGNING_P12_PATH: o.signing.p12Path,
    SIGNING_P12_PASSWORD: o.signing.p12Password,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCALE: '0.001',
    // B-T: the test CA's certificates name no OCSP responder or CRL, which B-LTA (the default with a TSA) needs.
    ...(o.tsaUrl ? { TSA_URL: o.tsaUrl, SIGNATURE_LEVEL: 'B-T' } : {}),
  };
}
