/**
 * Benchmark of the documents API: `npx tsx bench/api.ts` (or `npm run bench:api`).
 *
 * Starts an embedded PostgreSQL in a scratch folder and a Temporal dev server, seeds one account with documents (two
 * approvers each, set-based SQL inserts), and runs the real API (createApp) in a child process so its RSS is its
 * own, next to a naive handler in the same child (bare Koa and `pg`: bench/naive-server.ts). The same autocannon
 * settings (50 connections) then measure, in one run, each case right after its naive baseline:
 *   - GET /documents/{id} (random ids among the stored documents): target ≥ 1.5× the naive handler, p99 < 20 ms;
 *   - GET /documents?per_page=15: target ≥ 1.0× the naive handler;
 *   - POST /documents with a 1 MB PDF and two approvers (a fixed number of requests, at the first size only).
 * Each line shows requests per second, p50/p99 latency, the server's RSS after the run, and the rate as a ratio to
 * its naive baseline, then whether each target is met.
 *
 * BENCH_SECONDS (default 10) sets the length of each timed run. BENCH_DOCUMENTS (default 3000) the stored size, or
 * sizes: BENCH_DOCUMENTS=3000,300000 measures at 3,000 stored documents, adds documents up to 300,000, measures
 * again and prints each API rate at the largest size against the smallest (target: within 20 %).
 * Rate limiting is replaced by an unlimited limiter in the child: the point is the API's own cost.
 * BENCH_POOL (default 20) sets the PostgreSQL connections of the API and of the naive handler alike.
 * BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server child there; BENCH_ONLY=2,4 runs only those cases
 * (1-based: 1 naive by id, 2 by id, 3 naive list, 4 list, 5 POST) and their baselines.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { issueApiKey } from '../src/features/accounts/api-keys.ts';
import { hashPassword } from '../src/auth/passwords.ts';
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/db/knex.ts';
import { migrateLatest } from '../src/db/migrate.ts';
import { accountsStore } from '../src/features/accounts/accounts-store.ts';
import { createLogger } from '../src/logger.ts';
import { startApiServer } from '../src/runtime/api-server.ts';
import { startEmbeddedPostgres } from '../src/runtime/embedded-postgres.ts';
import { startTemporalDevServer } from '../src/runtime/temporal-dev-server.ts';
import { secretBoxFromSettings } from '../src/auth/secret-box.ts';
import { createStorage } from '../src/storage/create-storage.ts';
import { createTemporalClient } from '../src/temporal/client.ts';
import { freePort } from '../test/setup/free-port.ts';
import { makePdfOfSize } from '../test/helpers/pdf.ts';
import { startNaiveServer } from './naive-server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** BENCH_DOCUMENTS=3000,300000: the stored sizes measured in turn (documents are added between them). */
const SIZES = (process.env.BENCH_DOCUMENTS ?? '3000')
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const CONNECTIONS = 50;
/** PostgreSQL connections of the API and of the naive handler alike (BENCH_POOL; default 20). */
const POOL = Number(process.env.BENCH_POOL ?? 20);
const POST_REQUESTS = 500;

type ChildMessage = { ready: { api: string; naive: string } } | { rss: number; cpuMicros: number };

/** The child: the real API and the naive handler, on loopback ports, until the parent disconnects. */
async function serve(): Promise<void> {
  const config = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    DATABASE_URL: process.env.BENCH_DATABASE_URL,
    DATA_DIR: process.env.BENCH_DATA_DIR,
    TEMPORAL_ADDRESS: process.env.BENCH_TEMPORAL_ADDRESS,
    DATABASE_POOL_MAX: String(POOL),
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
      secrets: secretBoxFromSettings(config.encryption),
    },
    '127.0.0.1',
    0,
  );
  const naive = await startNaiveServer(process.env.BENCH_DATABASE_URL!, POOL);
  process.on('message', (message) => {
    if (message === 'rss') {
      const { user, system } = process.cpuUsage();
      process.send!({ rss: process.memoryUsage().rss, cpuMicros: user + system } satisfies ChildMessage);
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({
    ready: { api: `${api.url}/api/v1`, naive: naive.url },
  } satisfies ChildMessage);
}

function ask(child: ChildProcess, message: string): Promise<ChildMessage> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as ChildMessage));
    child.send(message);
  });
}

/**
 * Brings the account to `total` stored documents (two approvers each, all drafts) with set-based inserts.
 */
async function seedTo(db: ReturnType<typeof createDb>, accountId: string, total: number): Promise<void> {
  const year = new Date().getUTCFullYear();
  // Whatever is stored already (POST /documents adds some) counts; references go on from the account's counter.
  const [stored] = await db('documents').where({ account_id: accountId }).count<{ n: string }[]>({ n: '*' });
  const counter = await db('reference_counters')
    .where({ account_id: accountId, year })
    .first<{ last_sequence: number } | undefined>('last_sequence');
  const first = (counter?.last_sequence ?? 0) + 1;
  const last = first + Math.max(0, total - Number(stored?.n ?? 0)) - 1;
  for (let start = first; start <= last; start += 50_000) {
    const end = Math.min(last, start + 50_000 - 1);
    await db.raw(
      `WITH d AS (
         INSERT INTO documents (id, account_id, reference, title_ar, title_en, department, status, expires_at, file_key,
                                file_name, file_sha256, file_size, page_count, created_at, updated_at)
         SELECT gen_random_uuid(), :account, 'WQT-' || :year || '-' || lpad(i::text, 6, '0'), 'عقد رقم ' || i,
                'Contract ' || i, 'hr', 'draft', now() + interval '7 days', 'bench/' || i || '.pdf', 'contract.pdf',
                repeat('0', 64), 1024, 2, now() - make_interval(secs => :horizon - i), now()
           FROM generate_series(:start::int, :end::int) AS i
         RETURNING id)
       INSERT INTO approvers (document_id, account_id, name_ar, name_en, phone, order_index)
       SELECT d.id, :account, 'موافق ' || o, 'Approver ' || o, CASE o WHEN 1 THEN '966501234567' ELSE '966551234567' END, o
         FROM d CROSS JOIN generate_series(1, 2) AS o`,
      { account: accountId, year, start, end, horizon: 10_000_000 },
    );
  }
  if (last >= first)
    await db.raw(
      `INSERT INTO reference_counters (account_id, year, last_sequence) VALUES (?, ?, ?)
       ON CONFLICT (account_id, year) DO UPDATE SET last_sequence = excluded.last_sequence`,
      [accountId, year, last],
    );
  await db.raw('VACUUM ANALYZE documents');
  await db.raw('VACUUM ANALYZE approvers');
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

/** One table for one stored size: each case's rate, latency and RSS, and its rate against its naive baseline. */
function report(
  size: number,
  rows: Row[],
  cases: { name: string; baseline?: string; target?: { ratio: number; p99Ms?: number } }[],
): void {
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(38) : c.padStart(11))).join('');
  process.stdout.write(
    `\nWathiq API benchmark: ${size.toLocaleString('en')} stored documents, ${CONNECTIONS} connections, ${SECONDS} s per GET run, ${POST_REQUESTS} POSTs, ${os.cpus().length} CPUs\n\n`,
  );
  process.stdout.write(
    line(['', 'req/s', 'p50 ms', 'p99 ms', 'RSS MB', 'CPU ms/req', 'vs naive', 'failures', '503 busy']) +
      '\n',
  );
  const named = new Map(rows.map((r) => [r.name, r]));
  for (const r of rows) {
    const baseline = named.get(cases.find((c) => c.name === r.name)?.baseline ?? '');
    process.stdout.write(
      line([
        r.name,
        r.rps.toFixed(0),
        r.p50.toFixed(1),
        r.p99.toFixed(1),
        r.rssMb.toFixed(0),
        r.cpuMsPerRequest.toFixed(3),
        baseline ? `${(r.rps / baseline.rps).toFixed(3)}×` : '',
        String(r.failures),
        String(r.refused),
      ]) + '\n',
    );
  }
  if (rows.some((r) => r.refused > 0)) {
    process.stdout.write(
      `\n503 busy: uploads refused at once with Retry-After while every PDF inspection thread was busy (PDF_MAX_CONCURRENT_INSPECTIONS); such a case's req/s counts the 2xx answers only.\n`,
    );
  }
  process.stdout.write('\n');
  for (const c of cases) {
    const r = named.get(c.name);
    const baseline = named.get(c.baseline ?? '');
    if (!r || !baseline || !c.target) continue;
    const ratio = r.rps / baseline.rps;
    const met = ratio >= c.target.ratio && (c.target.p99Ms === undefined || r.p99 < c.target.p99Ms);
    const p99 = c.target.p99Ms === undefined ? '' : ` and p99 < ${c.target.p99Ms} ms`;
    process.stdout.write(
      `Target for ${c.name}: ≥ ${c.target.ratio.toFixed(1)}× the naive handler${p99} — ${met ? 'met' : 'MISSED'} (${ratio.toFixed(3)}×, p99 ${r.p99} ms)\n`,
    );
  }
}

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  rssMb: number;
  /** The server process's CPU time (user and system) per request answered: what the machine's load leaves alone. */
  cpuMsPerRequest: number;
  failures: number;
  /** Uploads refused with 503 and Retry-After because every PDF inspection thread was busy (by design). */
  refused: number;
}

async function main(): Promise<void> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bench-api-'));
  await chmod(scratch, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
  const logger = createLogger({ logLevel: 'warn' });
  const postgres = await startEmbeddedPostgres({
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
    const url = postgres.url('wathiq_bench');
    const db = createDb(url, { poolMax: 4 });
    await migrateLatest(db);
    const account = await accountsStore(db).create({
      name: 'Bench',
      email: 'bench@example.test',
      passwordHash: await hashPassword('bench password'),
      plan: 'enterprise',
    });
    const { apiKey, secret } = await issueApiKey(db, { accountId: account.id, name: 'bench' });

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
    })) as { ready: { api: string; naive: string } };
    const authorization = `Bearer ${apiKey.key}:${secret}`;
    const { body, contentType } = multipartBody(await makePdfOfSize(1024 * 1024));

    const run = async (
      name: string,
      options: Partial<autocannon.Options> & { url: string },
    ): Promise<Row> => {
      const base = { connections: CONNECTIONS, ...options };
      await autocannon({ ...base, duration: 2, amount: undefined }); // warm-up
      const before = (await ask(child!, 'rss')) as { cpuMicros: number };
      const started = performance.now();
      const result = await autocannon({ duration: SECONDS, ...base });
      const elapsedSeconds = (performance.now() - started) / 1000;
      const { rss, cpuMicros } = (await ask(child!, 'rss')) as { rss: number; cpuMicros: number };
      const refused = result.statusCodeStats?.['503']?.count ?? 0;
      return {
        name,
        rps: refused > 0 ? result['2xx'] / elapsedSeconds : result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        rssMb: rss / 1024 / 1024,
        cpuMsPerRequest: (cpuMicros - before.cpuMicros) / 1000 / Math.max(1, result.requests.total),
        failures: result.non2xx - refused + result.errors + result.timeouts,
        refused,
      };
    };
    const headers = { authorization };
    let ids: string[] = [];
    const byId = (base: string) => ({
      url: base,
      headers,
      requests: [
        {
          setupRequest: (req: autocannon.Request) => ({
            ...req,
            path: `${new URL(base).pathname.replace(/\/$/, '')}/documents/${ids[Math.floor(Math.random() * ids.length)]!}`,
          }),
        },
      ],
    });
    const list = (base: string) => ({ url: `${base}/documents?per_page=15`, headers });
    const naiveBase = ready.naive;

    // Each case is measured right after its naive baseline, so the two see the same machine.
    interface Case {
      name: string;
      options: () => Partial<autocannon.Options> & { url: string };
      baseline?: string;
      target?: { ratio: number; p99Ms?: number };
      /** Only at the first size: it adds documents, and its cost is not what the sizes compare. */
      once?: boolean;
    }
    const cases: Case[] = [
      { name: 'naive GET /documents/{id}', options: () => byId(naiveBase) },
      {
        name: 'GET /documents/{id}',
        options: () => byId(ready.api),
        baseline: 'naive GET /documents/{id}',
        target: { ratio: 1.5, p99Ms: 20 },
      },
      { name: 'naive GET /documents?per_page=15', options: () => list(naiveBase) },
      {
        name: 'GET /documents?per_page=15',
        options: () => list(ready.api),
        baseline: 'naive GET /documents?per_page=15',
        target: { ratio: 1.0 },
      },
      {
        name: 'POST /documents (1 MB, 2 approvers)',
        once: true,
        options: () => ({
          url: `${ready.api}/documents`,
          method: 'POST',
          headers: { ...headers, 'content-type': contentType },
          body,
          amount: POST_REQUESTS,
        }),
      },
    ];
    // BENCH_ONLY=2 (or 2,4) runs only those cases (1-based) and their baselines, e.g. while profiling.
    const only = process.env.BENCH_ONLY?.split(',').map(Number);
    const chosen = new Set(
      cases.flatMap((c, i) =>
        !only || only.includes(i + 1) ? [c.name, ...(c.baseline ? [c.baseline] : [])] : [],
      ),
    );

    const results = new Map<number, Row[]>();
    for (const [s, size] of SIZES.entries()) {
      await seedTo(db, account.id, size);
      ids = (await db('documents').where({ account_id: account.id }).pluck('id')) as string[];
      const rows: Row[] = [];
      for (const c of cases) {
        if (chosen.has(c.name) && (!c.once || s === 0)) rows.push(await run(c.name, c.options()));
      }
      results.set(size, rows);
      report(size, rows, cases);
    }
    if (SIZES.length > 1) {
      const small = results.get(SIZES[0]!)!;
      const large = results.get(SIZES[SIZES.length - 1]!)!;
      process.stdout.write(
        `\nLinear cost: the rate at ${SIZES[SIZES.length - 1]!.toLocaleString('en')} stored documents against ${SIZES[0]!.toLocaleString('en')} (target: within 20 %)\n`,
      );
      for (const r of large) {
        const before = small.find((x) => x.name === r.name);
        if (!before || r.name.startsWith('naive')) continue;
        const ratio = r.rps / before.rps;
        process.stdout.write(
          `  ${r.name.padEnd(36)} ${before.rps.toFixed(0).padStart(6)} → ${r.rps.toFixed(0).padStart(6)} req/s  ${ratio.toFixed(3)}×  ${ratio >= 0.8 ? 'met' : 'MISSED'}\n`,
        );
      }
    }
    await db.destroy();
  } finally {
    child?.disconnect();
    await temporal.stop();
    await postgres.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--serve') await serve();
else await main();
