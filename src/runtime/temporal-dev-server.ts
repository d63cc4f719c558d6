import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import type { Logger } from '../logger.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../temporal/search-attributes.ts';
import { locateOrBuildTemporalCli } from './temporal-cli.ts';
import { markStartup } from './startup-timings.ts';

type TestingModule = typeof import('@temporalio/testing'); // eslint-disable-line @typescript-eslint/consistent-type-imports -- loaded only when needed

export interface TemporalDevServerHandle {
  address: string;
  uiUrl?: string;
  stop(): Promise<void>;
}

export interface TemporalDevServerOptions {
  cliPath?: string;
  port: number;
  uiPort: number;
  namespace: string;
  /** SQLite file for workflow state, kept across restarts; in memory when absent (benchmarks). */
  dbFile?: string;
  logger: Logger;
  /** Called once the server process is spawned, before it answers. */
  onSpawned?: () => void;
}

/** `--search-attribute name=Keyword` for each of Wathiq's search attributes. */
export const searchAttributeFlags = (): string[] =>
  SEARCH_ATTRIBUTE_KEYS.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]);

/**
 * The dev server's settings beyond its defaults, the same as compose's deploy/temporal/dynamic-config.yaml (which
 * says why each is there; the compose test keeps the two equal). The tests' servers take them too.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, string>> = {
  'system.enableActivityEagerExecution': 'true',
  'history.transferProcessorMaxPollRPS': '1000',
};

/** `--dynamic-config-value key=value` for each of DEV_SERVER_DYNAMIC_CONFIG. */
export const devServerConfigFlags = (): string[] =>
  Object.entries(DEV_SERVER_DYNAMIC_CONFIG).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${v}`]);

/** True once something accepts connections on the port (the server opens it a second or so after it starts). */
const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function waitForFrontend(
  address: string,
  port: number,
  child: ChildProcess,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // The gRPC client takes a while to load: not before the port is open. Meanwhile this process does other work
  // (spawning PostgreSQL), and the server boots.
  while (Date.now() < deadline && child.exitCode === null && !(await portOpen(port)))
    await new Promise((r) => setTimeout(r, 50));
  const { Connection } = await import('@temporalio/client');
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Temporal dev server exited with code ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: '1 second' });
      try {
        await connection.healthService.check({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`Temporal dev server did not answer on ${address}: ${String(lastError)}`);
}

/**
 * Runs `temporal server start-dev` as a child process, with its Web UI and a SQLite file so workflows survive a
 * restart. Falls back to the SDK's cached download of the dev server when no CLI can be found or built.
 */
export async function startTemporalDevServer(
  options: TemporalDevServerOptions,
): Promise<TemporalDevServerHandle> {
  if (options.dbFile) await mkdir(path.dirname(options.dbFile), { recursive: true });
  const address = `127.0.0.1:${options.port}`;
  const cli = await locateOrBuildTemporalCli(options.cliPath, options.logger);
  if (!cli) return startWithSdkDownload(options);

  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--namespace',
    options.namespace,
    ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
    '--log-level',
    'warn',
    ...searchAttributeFlags(),
    ...devServerConfigFlags(),
  ];
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  markStartup('temporal spawned');
  options.onSpawned?.();
  child.stdout?.on('data', (d: Buffer) =>
    options.logger.debug({ temporal: d.toString().trim() }, 'temporal'),
  );
  child.stderr?.on('data', (d: Buffer) =>
    options.logger.debug({ temporal: d.toString().trim() }, 'temporal'),
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never leave the dev server behind, whatever way this process ends.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  try {
    await waitForFrontend(address, options.port, child, 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    address,
    uiUrl: `http://localhost:${options.uiPort}`,
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function startWithSdkDownload(options: TemporalDevServerOptions): Promise<TemporalDevServerHandle> {
  options.logger.warn(
    'no Temporal CLI found and Go is missing: trying the SDK’s cached download of the dev server',
  );
  let testing: TestingModule;
  try {
    testing = await import('@temporalio/testing');
  } catch {
    throw new Error(
      'No Temporal CLI: set TEMPORAL_CLI_PATH, put `temporal` on PATH, install Go, or set TEMPORAL_ADDRESS to a running cluster',
    );
  }
  const env = await testing.TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'cached-download' },
      ip: '127.0.0.1',
      port: options.port,
      ui: true,
      uiPort: options.uiPort,
      namespace: options.namespace,
      ...(options.dbFile ? { dbFilename: options.dbFile } : {}),
      searchAttributes: [...SEARCH_ATTRIBUTE_KEYS],
      extraArgs: devServerConfigFlags(),
    },
  });
  return { address: env.address, uiUrl: `http://localhost:${options.uiPort}`, stop: () => env.teardown() };
}
