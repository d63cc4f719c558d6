/**
 * Bulk send against single documents: `npm run bench:bulk-send [-- --rows 1000 --concurrency 4]`.
 *
 * Everything real on this machine: an embedded PostgreSQL, a Temporal dev server, the worker as its own process
 * (as deployed), the API in this process, and the fake WhatsApp Cloud API on loopback. One template (two roles,
 * sequential: one WhatsApp message per document at send). In the same run:
 *
 * - baseline: `rows` documents as single `POST /documents` (multipart, the same PDF) then
 *   `POST /documents/{id}/send`, `concurrency` at a time;
 * - bulk send: one `POST /templates/{id}/bulk-sends` with `rows` JSON rows, the worker making and sending
 *   `concurrency` rows at a time (BULK_SEND_CONCURRENCY), with a tier and a throughput far above the run so
 *   pacing never holds it back.
 *
 * For each it prints documents made per second (until the last is in PostgreSQL) and first notifications sent per
 * second (until WhatsApp, the fake, accepted the last first message), and the bulk send's rates as a ratio of the
 * baseline's. Speed is measured here, never asserted in tests.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { issueApiKey } from '../src/features/accounts/api-keys.ts';
import { hashPassword } from '../src/auth/passwords.ts';
import { secretBoxFromSettings } from '../src/auth/secret-box.ts';
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/db/knex.ts';
import { migrateLatest } from '../src/db/migrate.ts';
import { accountsStore } from '../src/features/accounts/accounts-store.ts';
import { createLogger } from '../src/logger.ts';
import { startApiServer } from '../src/runtime/api-server.ts';
import { startEmbeddedPostgres } from '../src/runtime/embedded-postgres.ts';
import { startTemporalDevServer } from '../src/runtime/temporal-dev-server.ts';
import { createStorage } from '../src/storage/create-storage.ts';
import { createTemporalClient } from '../src/temporal/client.ts';
import { installTemporalRuntime } from '../src/temporal/runtime.ts';
import { startFakeGraphApi } from '../test/fakes/fake-graph-api.ts';
import { makePdf } from '../test/helpers/pdf.ts';
import { freePort } from '../test/setup/free-port.ts';

const { values: args } = parseArgs({
  options: { rows: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '4' } },
});
const ROWS = Number(args.rows);
const CONCURRENCY = Number(args.concurrency);

const phone = (group: number, i: number) => `9665${String(group * 1_000_000 + i).padStart(8, '0')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const logger = createLogger({ logLevel: 'warn' });
  installTemporalRuntime(logger);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bench-bulk-'));
  await chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg', 'data'),
    port: await freePort(),
    logger,
    database: 'wathiq',
  });
  const temporal = await startTemporalDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    namespace: 'default',
    logger,
  });
  const graph = await startFakeGraphApi();
  const env = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: dir,
    DATABASE_URL: pg.url('wathiq'),
    DATABASE_POOL_MAX: '20',
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'bench-bulk',
    WHATSAPP_PROVIDER: 'cloud',
    WHATSAPP_API_URL: graph.apiUrl,
    WHATSAPP_PHONE_NUMBER_ID: graph.phoneNumberId,
    WHATSAPP_ACCESS_TOKEN: graph.accessToken,
    WHATSAPP_APP_SECRET: 'bench',
    WHATSAPP_VERIFY_TOKEN: 'bench',
    BULK_SEND_CONCURRENCY: String(CONCURRENCY),
    BULK_SEND_MAX_ROWS: String(Math.max(ROWS, 5000)),
    WHATSAPP_TIER_RECIPIENTS_PER_DAY: '100000000',
    WHATSAPP_THROUGHPUT_MPS: '10000',
    // The baseline's uploads are inspected as many at a time as it sends, so none waits for a slot.
    PDF_MAX_CONCURRENT_INSPECTIONS: String(CONCURRENCY),
    UPLOADS_MAX_IN_FLIGHT: String(Math.max(16, CONCURRENCY)),
    UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: String(CONCURRENCY),
  };
  const config = loadConfig(env);
  const db = createDb(pg.url('wathiq'), { poolMax: 20 });
  await migrateLatest(db);
  const worker = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => worker.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    worker.stdout.on('data', (d: Buffer) => d.toString().includes('Wathiq is running') && resolve());
    worker.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  // No rate limit: the run sends thousands of requests a minute with one key.
  const unlimited = {
    hit: (_b: string, limit: number) =>
      Promise.resolve({ allowed: true, limit, remaining: limit, resetAt: 0 }),
  };
  const client = createTemporalClient({ address: temporal.address, namespace: 'default' });
  const api = await startApiServer(
    {
      config,
      db,
      temporal: client,
      logger,
      rateLimiter: unlimited,
      storage: createStorage(config),
      secrets: secretBoxFromSettings(config.encryption),
    },
    '127.0.0.1',
    0,
  );
  const base = `${api.url}/api/v1`;
  const account = await accountsStore(db).create({
    name: 'Bench Co',
    email: `bench-${randomBytes(4).toString('hex')}@example.test`,
    passwordHash: await hashPassword('bench bench bench'),
    plan: 'enterprise',
  });
  const key = await issueApiKey(db, { accountId: account.id, name: 'bench' });
  const authorization = `Bearer ${key.apiKey.key}:${key.secret}`;
  const call = async (pathname: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', authorization);
    if (typeof init.body === 'string') headers.set('content-type', 'application/json');
    let res = await fetch(`${base}${pathname}`, { ...init, headers });
    // An account has a few uploads in flight at most: a refused one waits as a client is told to, and goes again.
    while (res.status === 429 || res.status === 503) {
      await sleep(Number(res.headers.get('retry-after') ?? '0.1') * 1000 || 100);
      res = await fetch(`${base}${pathname}`, { ...init, headers });
    }
    if (res.status >= 300)
      throw new Error(`${init.method ?? 'GET'} ${pathname}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { data: { id: string } };
  };
  const pdf = await makePdf(1, 'Bench');
  const roles = [
    { key: 'employee', label_ar: 'الموظف', label_en: 'Employee', action_type: 'sign' },
    { key: 'hr', label_ar: 'الموارد البشرية', label_en: 'HR', action_type: 'approve_only' },
  ];
  const templateForm = new FormData();
  templateForm.append('title', 'Bench amendment');
  templateForm.append('roles', JSON.stringify(roles));
  templateForm.append('file', new Blob([pdf], { type: 'application/pdf' }), 'bench.pdf');
  const template = (await call('/templates', { method: 'POST', body: templateForm })).data;

  /** Seconds until `done()` holds, checked every 50 ms from `start`. */
  const until = async (start: number, done: () => Promise<boolean> | boolean) => {
    while (!(await done())) await sleep(50);
    return (performance.now() - start) / 1000;
  };
  const accepted = (group: number) =>
    graph.requests.filter(
      (r) => r.wamid && ((r.body as { to?: string }).to ?? '').startsWith(phone(group, 0).slice(0, 6)),
    ).length;
  const documentsOf = async (filter: (q: ReturnType<typeof db>) => unknown) =>
    Number(
      (
        await db('documents')
          .where({ account_id: account.id })
          .modify(filter)
          .count<{ n: number }[]>({ n: '*' })
      )[0]!.n,
    );

  // Baseline: single documents, created and sent by `CONCURRENCY` clients.
  let next = 0;
  const started = performance.now();
  const client1 = async () => {
    for (let i = next++; i < ROWS; i = next++) {
      const form = new FormData();
      form.append('title', 'Bench amendment');
      form.append('approvers[0][name]', `Employee ${i}`);
      form.append('approvers[0][phone]', phone(1, i));
      form.append('approvers[0][action_type]', 'sign');
      form.append('approvers[1][name]', 'HR');
      form.append('approvers[1][phone]', phone(2, i));
      form.append('approvers[1][action_type]', 'approve_only');
      form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'bench.pdf');
      const doc = (await call('/documents', { method: 'POST', body: form })).data;
      await call(`/documents/${doc.id}/send`, { method: 'POST' });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client1));
  const singleCreated = await until(
    started,
    async () => (await documentsOf((q) => q.whereNull('template_id'))) >= ROWS,
  );
  const singleNotified = await until(started, () => accepted(1) >= ROWS);

  // Bulk send: the same number of documents from one request.
  const rows = Array.from({ length: ROWS }, (_, i) => ({
    employee: { name: `Employee ${i}`, phone: phone(3, i) },
    hr: { name: 'HR', phone: phone(4, i) },
  }));
  const bulkStarted = performance.now();
  await call(`/templates/${template.id}/bulk-sends`, { method: 'POST', body: JSON.stringify({ rows }) });
  const bulkCreated = await until(
    bulkStarted,
    async () => (await documentsOf((q) => q.where({ template_id: template.id }))) >= ROWS,
  );
  const bulkNotified = await until(bulkStarted, () => accepted(3) >= ROWS);

  const rate = (s: number) => ROWS / s;
  const line = (what: string, single: number, bulk: number) =>
    console.log(
      `${what.padEnd(34)} single ${rate(single).toFixed(1).padStart(7)}/s   bulk ${rate(bulk).toFixed(1).padStart(7)}/s   ratio ${(rate(bulk) / rate(single)).toFixed(2)}×`,
    );
  console.log(`bulk send of ${ROWS} rows vs ${ROWS} × (POST /documents + send), concurrency ${CONCURRENCY}`);
  line('documents created', singleCreated, bulkCreated);
  line('first notifications sent', singleNotified, bulkNotified);

  await api.stop();
  worker.kill('SIGTERM');
  await new Promise((r) => worker.once('exit', r));
  await client.close();
  await db.destroy();
  await graph.close();
  await temporal.stop();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
