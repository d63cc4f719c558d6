/**
 * CPU of one PostgreSQL statement over the embedded server's Unix socket against over loopback TCP:
 * `npx tsx bench/pg-transport.ts [--statements 4000 --rounds 6]`. One client on each, taking turns in rounds of
 * `--statements` (a row read by primary key, as most of a document's statements are); each statement's cost is this
 * process's CPU plus its server backend's (from /proc), so the figure does not move with the machine's other work.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createLogger } from '../src/logger.ts';
import { startEmbeddedPostgres } from '../src/runtime/embedded-postgres.ts';
import { freePort } from '../test/setup/free-port.ts';
import { HZ, readProcStat } from './process-cpu.ts';

const { values: args } = parseArgs({
  options: { statements: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '6' } },
});
const STATEMENTS = Number(args.statements);
const ROUNDS = Number(args.rounds);
for (const [flag, n] of [
  ['--statements', STATEMENTS],
  ['--rounds', ROUNDS],
] as const)
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes whole numbers from 1`);

/** utime + stime of a process, in µs. */
async function processCpuUs(pid: number): Promise<number> {
  const stat = await readProcStat(`/proc/${pid}/stat`);
  if (!stat) throw new Error(`process ${pid} has exited`);
  return (stat.own / HZ) * 1e6;
}
const ownCpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-pg-transport-'));
  await chmod(dir, 0o755);
  const server = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg', 'data'),
    port: await freePort(),
    logger: createLogger({ logLevel: 'warn' }),
    database: 'bench',
  });
  const clients = {
    tcp: new pg.Client({ connectionString: server.url('bench') }),
    socket: new pg.Client({ connectionString: server.localUrl('bench') }),
  };
  if (server.localUrl('bench') === server.url('bench'))
    throw new Error('this platform has no Unix socket here');
  const setup = clients.tcp;
  await setup.connect();
  await setup.query('CREATE TABLE t (id int PRIMARY KEY, title text, created_at timestamptz DEFAULT now())');
  await setup.query("INSERT INTO t (id, title) SELECT i, 'document ' || i FROM generate_series(1, 1000) i");
  await clients.socket.connect();
  const backends = {
    tcp: (await clients.tcp.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid,
    socket: (await clients.socket.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid,
  };
  const totals = { tcp: { client: 0, server: 0 }, socket: { client: 0, server: 0 } };
  for (let round = 0; round <= ROUNDS; round++) {
    for (const kind of round % 2 ? (['tcp', 'socket'] as const) : (['socket', 'tcp'] as const)) {
      const client = clients[kind];
      const [c0, s0] = [ownCpuUs(), await processCpuUs(backends[kind])];
      for (let i = 0; i < STATEMENTS; i++)
        await client.query('SELECT id, title, created_at FROM t WHERE id = $1', [1 + (i % 1000)]);
      const [c1, s1] = [ownCpuUs(), await processCpuUs(backends[kind])];
      // The first round warms both up (the code compiled, the plans cached) and is not counted.
      if (round === 0) continue;
      totals[kind].client += c1 - c0;
      totals[kind].server += s1 - s0;
    }
  }
  const n = STATEMENTS * ROUNDS;
  console.log(
    `one statement's CPU, ${n} each, in alternating rounds (load average ${os.loadavg()[0]!.toFixed(2)}):`,
  );
  for (const kind of ['tcp', 'socket'] as const) {
    const { client, server: backend } = totals[kind];
    console.log(
      `  ${kind === 'tcp' ? 'loopback TCP' : 'Unix socket '}  ${((client + backend) / n).toFixed(1)} µs (client ${(client / n).toFixed(1)}, server ${(backend / n).toFixed(1)})`,
    );
  }
  await clients.tcp.end();
  await clients.socket.end();
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
