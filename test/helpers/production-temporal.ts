import { execFile, spawn } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../../src/logger.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/runtime/embedded-postgres.ts';
import { freePort } from '../setup/free-port.ts';
import { temporalAnswers, track, waitFor, type RunningProcess } from './processes.ts';

/**
 * A production-shaped Temporal server of a test's own: the server built from Go modules (every service role in one
 * process), PostgreSQL persistence for history and visibility in an embedded PostgreSQL of its own, 4 history
 * shards, the static config test/helpers/temporal-server/wathiq.yaml, and deploy/temporal/dynamic-config.yaml. Its
 * databases and namespace are set up by the very scripts compose's admin-tools jobs run
 * (deploy/temporal/setup-schema.sh and setup-namespace.sh), with Temporal's SQL tool and CLI.
 */

/** The server version of the Temporal CLI's dev server (`temporal --version`), and so of compose's images. */
export const TEMPORAL_SERVER_VERSION = '1.29.1';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CONFIG_ROOT = path.join(ROOT, 'test/helpers');
const run = promisify(execFile);

export interface TemporalServerBuild {
  server: string;
  sqlTool: string;
  /** The PostgreSQL 12+ schema folder of the server module (`…/schema/postgresql/v12`). */
  schemaDir: string;
}

/** The server and SQL tool from ~/.cache/wathiq/bin, built by scripts/ensure-temporal-server.sh when missing. */
export async function ensureTemporalServerBuild(): Promise<TemporalServerBuild> {
  const { stdout } = await run('bash', [path.join(ROOT, 'scripts/ensure-temporal-server.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const [bin, schemaDir] = stdout.trim().split('\n');
  if (!bin || !schemaDir) throw new Error(`ensure-temporal-server.sh printed no paths: ${stdout}`);
  return {
    server: path.join(bin, `temporal-server-${TEMPORAL_SERVER_VERSION}`),
    sqlTool: path.join(bin, `temporal-sql-tool-${TEMPORAL_SERVER_VERSION}`),
    schemaDir,
  };
}

export interface ProductionTemporal {
  address: string;
  /** The running server process (a new one after `restart`). */
  process: RunningProcess;
  /** Everything every server process so far wrote (its log, at info level). */
  output(): string;
  /** Starts the server again on the same ports and databases (after a kill). */
  restart(): Promise<void>;
  /** Runs compose's schema job (deploy/temporal/setup-schema.sh) again; resolves with what it printed. */
  setupSchema(): Promise<string>;
  /** Runs compose's namespace job (deploy/temporal/setup-namespace.sh) again; resolves with what it printed. */
  setupNamespace(): Promise<string>;
  /** Stops the server and its PostgreSQL. */
  stop(): Promise<void>;
}

/**
 * A free port below 32768: the server records each role's membership port in PostgreSQL as a smallint, and the
 * ports the system hands out on request (freePort) lie above that on Linux.
 */
async function freeMembershipPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port below 32768 for a Temporal membership port');
}

/** The names the scripts run by: the admin-tools image has `temporal-sql-tool` and `temporal` on its PATH. */
async function toolFolder(dir: string, build: TemporalServerBuild, cliPath: string): Promise<string> {
  const bin = path.join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  await symlink(build.sqlTool, path.join(bin, 'temporal-sql-tool'));
  await symlink(cliPath, path.join(bin, 'temporal'));
  return bin;
}

/** SIGTERM, and SIGKILL when it has not ended after a while: a server draining its shards can take long. */
async function stopServer(p: RunningProcess): Promise<void> {
  const timer = setTimeout(() => void p.kill('SIGKILL'), 15_000);
  await p.kill('SIGTERM');
  clearTimeout(timer);
}

async function runScript(script: string, env: Record<string, string>): Promise<string> {
  try {
    const { stdout } = await run('sh', [path.join(ROOT, 'deploy/temporal', script)], {
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`${script} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/**
 * Starts the server in `dir` (its PostgreSQL data, its tool folder) and waits until the namespace `default` has
 * Wathiq's search attributes. `cliPath` is the Temporal CLI (the namespace script's `temporal`).
 */
export async function startProductionTemporal(options: {
  dir: string;
  cliPath: string;
  /** Another dynamic config file than deploy/temporal/dynamic-config.yaml (a benchmark's "without" run). */
  dynamicConfig?: string;
}): Promise<ProductionTemporal> {
  const build = await ensureTemporalServerBuild();
  const logger = createLogger({ logLevel: 'silent' });
  const pgPort = await freePort();
  const postgres: EmbeddedPostgresHandle = await startEmbeddedPostgres({
    dir: path.join(options.dir, 'temporal-postgres', 'data'),
    port: pgPort,
    logger,
  });
  try {
    const pgUrl = new URL(postgres.url('postgres'));
    const user = decodeURIComponent(pgUrl.username);
    const password = decodeURIComponent(pgUrl.password);
    const bin = await toolFolder(options.dir, build, options.cliPath);
    const PATH = `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
    const setupSchema = () =>
      runScript('setup-schema.sh', {
        PATH,
        SQL_HOST: '127.0.0.1',
        SQL_PORT: String(pgPort),
        SQL_USER: user,
        SQL_PASSWORD: password,
        TEMPORAL_SCHEMA_DIR: build.schemaDir,
      });
    await setupSchema();

    const ports: Record<string, string> = {};
    for (const role of ['FRONTEND', 'HISTORY', 'MATCHING', 'WORKER']) {
      ports[`WATHIQ_TEMPORAL_${role}_PORT`] = String(await freePort());
      ports[`WATHIQ_TEMPORAL_${role}_MEMBERSHIP_PORT`] = String(await freeMembershipPort());
    }
    const address = `127.0.0.1:${ports.WATHIQ_TEMPORAL_FRONTEND_PORT}`;
    const env = {
      ...process.env,
      ...ports,
      WATHIQ_TEMPORAL_PG_PORT: String(pgPort),
      WATHIQ_TEMPORAL_PG_USER: user,
      WATHIQ_TEMPORAL_PG_PASSWORD: password,
      WATHIQ_TEMPORAL_DYNAMIC_CONFIG:
        options.dynamicConfig ?? path.join(ROOT, 'deploy/temporal/dynamic-config.yaml'),
    };
    const args = ['--root', CONFIG_ROOT, '--config', 'temporal-server', '--env', 'wathiq', '--allow-no-auth'];
    let earlier = '';
    const launch = async () => {
      const p = track(
        'temporal',
        spawn(build.server, [...args, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] }),
      );
      await waitFor(p, () => temporalAnswers(address), 120_000, 'answer on its frontend');
      return p;
    };

    const handle: ProductionTemporal = {
      address,
      process: await launch(),
      output: () => earlier + handle.process.output(),
      async restart() {
        earlier += handle.process.output();
        handle.process = await launch();
      },
      setupSchema,
      setupNamespace: () =>
        runScript('setup-namespace.sh', { PATH, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default' }),
      async stop() {
        await stopServer(handle.process);
        await postgres.stop();
      },
    };
    try {
      await handle.setupNamespace();
    } catch (err) {
      await handle.process.kill('SIGKILL');
      throw err;
    }
    return handle;
  } catch (err) {
    await postgres.stop();
    throw err;
  }
}
