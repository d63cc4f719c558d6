/**
 * Benchmark of the documents API: `npx tsx bench/api.ts` (or `npm run bench:api`).
 *
 * Starts an embedded PostgreSQL in a scratch folder and a Temporal dev server, seeds one account with a few thousand documents (two
 * approvers each), and runs the real API (createApp) in a child process so its RSS is its own, next to a bare Koa
 * handler in the same child. The same autocannon settings (50 connections) then measure, in one run:
 *   - the bare Koa handler (the baseline),
 *   - GET /documents/{id} (random ids among the seeded documents),
 *   - GET /documents?per_page=15,
 *   - POST /documents with a 1 MB PDF and two approvers (a fixed number of requests, to bound disk use).
 * Each line shows requests per second, p50/p99 latency, the server's RSS after the run, and the rate as a ratio to
 * the bare handler. Target: GET /documents/{id} at ≥ 1/4 of the bare rate with p99 < 25 ms.
 *
 * BENCH_SECONDS (default 10) sets the length of each timed run; BENCH_DOCUMENTS (default 3000) the seed size.
 * Rate limiting is replaced by an unlimited limiter in the child: the point is the API's own cost.
 * BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server child there; BENCH_ONLY=2,3 runs only those cases
 * (1-based, the bare handler always runs).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Koa from 'koa';
import { issueApiKey } from '../src/accounts/api-keys.ts';
import { hashPassword } from '../src/auth/passwords.ts';
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/db/knex.ts';
import { migrateLatest } from '../src/db/migrate.ts';
import { accountsStore } from '../src/db/stores/accounts-store.ts';
import { createLogger } from '../src/logger.ts';
import { startApiServer } from '../src/runtime/api-server.ts';
import { startEmbeddedPostgres } from '../src/runtime/embedded-postgres.ts';
import { startTemporalDevServer } from '../src/runtime/temporal-dev-server.ts';
import { createStorage } from '../src/storage/create-storage.ts';
import { createTemporalClient } from '../src/temporal/client.ts';
import { freePort } from '../test/setup/free-port.ts';
import { makePdfOfSize } from '../test/helpers/pdf.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const DOCUMENTS = Number(process.env.BENCH_DOCUMENTS ?? 3000);
const CONNECTIONS = 50;
const POST_REQUESTS = 500;

type ChildMessage = { ready: { api: string; bare: string } } | { rss: number };

/** The child: the real API and a bare Koa handler, on loopback ports, until the parent disconnects. */
async function serve(): Promise<void> {
  const config = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    DATABASE_URL: process.env.BENCH_DATABASE_URL,
    DATA_DIR: process.env.BENCH_DATA_DIR,
    TEMPORAL_ADDRESS: process.env.BENCH_TEMPORAL_ADDRESS,
    DATABASE_POOL_MAX: '20',
  });
  const logger = createLogger(config);
  const db = createDb(config.database.url!, { poolMax: config.database.poolMax });
  const unlimited = {
    hit: (_bucket: string, limit: number) =>
      Promise.resolve({ allowed: true, limit, remaining: limit, resetAt: 0 }),
  };
  const api = await startApiServer(
    {
      config,
      db,
      temporal: createTemporalClient({
        address: config.temporal.address!,
        namespace: config.temporal.namespace,
      }),
      logger,
      rateLimiter: unlimited,
      storage: createStorage(config),
    },
    '127.0.0.1',
    0,
  );
  const bare = new Koa();
  bare.use((ctx) => {
    ctx.body = { success: true, data: { id: '00000000-0000-4000-8000-000000000000', status: 'draft' } };
  });
  const bareServer = bare.listen(0, '127.0.0.1');
  await new Promise((r) => bareServer.once('listening', r));
  const address = bareServer.address();
  const barePort = typeof address === 'object' && address ? address.port : 0;
  process.on('message', (message) => {
    if (message === 'rss') process.send!({ rss: process.memoryUsage().rss } satisfies ChildMessage);
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({
    ready: { api: `${api.url}/api/v1`, bare: `http://127.0.0.1:${barePort}` },
  } satisfies ChildMessage);
}

function ask(child: ChildProcess, message: string): Promise<ChildMessage> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as ChildMessage));
    child.send(message);
  });
}

async function seed(db: ReturnType<typeof createDb>, accountId: string): Promise<string[]> {
  const year = new Date().getUTCFullYear();
  const ids: string[] = [];
  for (let start = 0; start < DOCUMENTS; start += 500) {
    const docs = [];
    const approvers = [];
    for (let i = start; i < Math.min(DOCUMENTS, start + 500); i++) {
      const id = randomUUID();
      ids.push(id);
      docs.push({
        id,
        account_id: accountId,
        reference: `WQT-${year}-${String(i + 1).padStart(6, '0')}`,
        title_ar: `عقد رقم ${i + 1}`,
        title_en: `Contract ${i + 1}`,
        department: 'hr',
        expires_at: new Date(Date.now() + 7 * 86400_000),
        file_key: `bench/${id}.pdf`,
        file_name: 'contract.pdf',
        file_sha256: '0'.repeat(64),
        file_size: 1024,
        page_count: 2,
        created_at: new Date(Date.now() - (DOCUMENTS - i) * 1000),
      });
      for (const order of [1, 2]) {
        approvers.push({
          document_id: id,
          account_id: accountId,
          name_ar: `موافق ${order}`,
          name_en: `Approver ${order}`,
          phone: order === 1 ? '966501234567' : '966551234567',
          order_index: order,
        });
      }
    }
    await db('documents').insert(docs);
    await db('approvers').insert(approvers);
  }
  await db('reference_counters').insert({ account_id: accountId, year, last_sequence: DOCUMENTS });
  return ids;
}

function multipartBody(pdf: Buffer): { body: Buffer; contentType: string } {
  const boundary = 'wathiqbench0123456789';
  const field = (name: string, value: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head =
    field('title_ar', 'عقد') +
    field('title_en', 'Contract') +
    field('approvers[0][name]', 'Ali') +
    field('approvers[0][phone]', '966501234567') +
    field('approvers[1][name]', 'Sara') +
    field('approvers[1][phone]', '966551234567') +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="contract.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), pdf, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  rssMb: number;
  failures: number;
}

async function main(): Promise<void> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bench-api-'));
  await chmod(scratch, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
  const logger = createLogger({ logLevel: 'warn' });
  const pg = await startEmbeddedPostgres({
    dir: path.join(scratch, 'postgres', 'pgdata'),
    port: await freePort(),
    logger,
    database: 'wathiq_bench',
  });
  // POST /documents hands document.created to the webhook dispatcher, which talks to Temporal.
  const temporal = await startTemporalDevServer({
    cliPath: process.env.TEMPORAL_CLI_PATH,
    port: await freePort(),
    uiPort: await freePort(),
    namespace: 'default',
    logger,
  });
  let child: ChildProcess | undefined;
  try {
    const url = pg.url('wathiq_bench');
    const db = createDb(url, { poolMax: 4 });
    await migrateLatest(db);
    const account = await accountsStore(db).create({
      name: 'Bench',
      email: 'bench@example.test',
      passwordHash: await hashPassword('bench password'),
      plan: 'enterprise',
    });
    const { apiKey, secret } = await issueApiKey(db, { accountId: account.id, name: 'bench' });
    const ids = await seed(db, account.id);
    await db.raw('ANALYZE');
    await db.destroy();

    child = fork(fileURLToPath(import.meta.url), ['--serve'], {
      env: {
        ...process.env,
        BENCH_DATABASE_URL: url,
        BENCH_DATA_DIR: path.join(scratch, 'data'),
        BENCH_TEMPORAL_ADDRESS: temporal.address,
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [
        ...process.execArgv,
        ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      ],
    });
    const { ready } = (await new Promise<ChildMessage>((resolve, reject) => {
      child!.once('message', (m) => resolve(m as ChildMessage));
      child!.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
    })) as { ready: { api: string; bare: string } };
    const authorization = `Bearer ${apiKey.key}:${secret}`;
    const { body, contentType } = multipartBody(await makePdfOfSize(1024 * 1024));

    const run = async (
      name: string,
      options: Partial<autocannon.Options> & { url: string },
    ): Promise<Row> => {
      const base = { connections: CONNECTIONS, ...options };
      await autocannon({ ...base, duration: 2, amount: undefined }); // warm-up
      const result = await autocannon({ duration: SECONDS, ...base });
      const { rss } = (await ask(child!, 'rss')) as { rss: number };
      return {
        name,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        rssMb: rss / 1024 / 1024,
        failures: result.non2xx + result.errors + result.timeouts,
      };
    };
    const headers = { authorization };
    const pick = () => ids[Math.floor(Math.random() * ids.length)]!;

    const cases: [string, Partial<autocannon.Options> & { url: string }][] = [
      ['bare Koa handler', { url: ready.bare }],
      [
        'GET /documents/{id}',
        {
          url: ready.api,
          headers,
          requests: [{ setupRequest: (req) => ({ ...req, path: `/api/v1/documents/${pick()}` }) }],
        },
      ],
      ['GET /documents?per_page=15', { url: `${ready.api}/documents?per_page=15`, headers }],
      [
        'POST /documents (1 MB, 2 approvers)',
        {
          url: `${ready.api}/documents`,
          method: 'POST',
          headers: { ...headers, 'content-type': contentType },
          body,
          amount: POST_REQUESTS,
        },
      ],
    ];
    // BENCH_ONLY=2 (or 2,3) runs the bare handler and only those cases (1-based), e.g. while profiling.
    const only = process.env.BENCH_ONLY?.split(',').map(Number);
    const rows: Row[] = [];
    for (const [i, [name, options]] of cases.entries()) {
      if (i === 0 || !only || only.includes(i + 1)) rows.push(await run(name, options));
    }

    const bare = rows[0]!;
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(38) : c.padStart(10))).join('');
    process.stdout.write(
      `\nWathiq API benchmark: ${DOCUMENTS} documents, ${CONNECTIONS} connections, ${SECONDS} s per GET run, ${POST_REQUESTS} POSTs, ${os.cpus().length} CPUs\n\n`,
    );
    process.stdout.write(line(['', 'req/s', 'p50 ms', 'p99 ms', 'RSS MB', 'vs bare', 'failures']) + '\n');
    for (const r of rows) {
      process.stdout.write(
        line([
          r.name,
          r.rps.toFixed(0),
          r.p50.toFixed(1),
          r.p99.toFixed(1),
          r.rssMb.toFixed(0),
          `${(r.rps / bare.rps).toFixed(3)}×`,
          String(r.failures),
        ]) + '\n',
      );
    }
    const byId = rows.find((r) => r.name === 'GET /documents/{id}');
    if (!byId) return;
    const met = byId.rps >= bare.rps / 4 && byId.p99 < 25;
    process.stdout.write(
      `\nTarget for GET /documents/{id}: ≥ 0.25× the bare rate and p99 < 25 ms — ${met ? 'met' : 'MISSED'} (${(byId.rps / bare.rps).toFixed(3)}×, p99 ${byId.p99} ms)\n`,
    );
  } finally {
    child?.disconnect();
    await temporal.stop();
    await pg.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--serve') await serve();
else await main();
