/**
 * End-to-end lifecycle benchmark: `npm run bench:lifecycle [-- --documents 200 --concurrency 20]`.
 *
 * Everything real and on this machine: an embedded PostgreSQL, a Temporal dev server, the worker and the API in
 * this process, and a fake WhatsApp Cloud API on loopback standing in for Meta. N documents (3 approvers each,
 * half sequential, half parallel) are created, sent, and driven to `approved` the way approvers act: the
 * WhatsApp button (approve_only, review_only, through Meta-signed webhook calls) and the approval page (sign,
 * with a typed name). Prints documents per second end to end, p50/p99 from the last action to `approved`, the
 * CPU share of the Temporal server, PostgreSQL and this process (API + worker), and — as the baseline measured in
 * the same run — the rate of the bare API → PostgreSQL + Temporal round trip (GET /health).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
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
import { createRateLimiter } from '../src/runtime/rate-limiter-factory.ts';
import { createStorage } from '../src/storage/create-storage.ts';
import { createTemporalClient } from '../src/temporal/client.ts';
import { installTemporalRuntime } from '../src/temporal/runtime.ts';
import {
  buttonReplyNotification,
  signedNotification,
  startFakeGraphApi,
  type RecordedRequest,
} from '../test/fakes/fake-graph-api.ts';
import { freePort } from '../test/setup/free-port.ts';
import { makePdf } from '../test/helpers/pdf.ts';

const { values: args } = parseArgs({
  options: {
    documents: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '20' },
    health: { type: 'string', default: '200' },
  },
});
const N = Number(args.documents);
const CONCURRENCY = Number(args.concurrency);
const HEALTH_CHECKS = Number(args.health);

/** utime + stime of a process and its children-by-name, in clock ticks, from /proc. */
async function cpuTicks(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* exited */
    }
  }
  return total;
}

async function pidsMatching(pattern: RegExp): Promise<number[]> {
  const out: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmd = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (pattern.test(cmd.replace(/\0/g, ' '))) out.push(Number(entry));
  }
  return out;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;

async function main() {
  const logger = createLogger({ logLevel: 'warn' });
  installTemporalRuntime(logger);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bench-'));
  await chmod(dir, 0o755);
  const pgPort = await freePort();
  const pg = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg', 'data'),
    port: pgPort,
    logger,
    database: 'wathiq',
  });
  const temporalPort = await freePort();
  const temporal = await startTemporalDevServer({
    port: temporalPort,
    uiPort: await freePort(),
    namespace: 'default',
    logger,
  });
  const graph = await startFakeGraphApi();
  const appSecret = randomBytes(16).toString('hex');
  const workerEnv = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: dir,
    DATABASE_URL: pg.url('wathiq'),
    DATABASE_POOL_MAX: '30',
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'bench',
    WHATSAPP_PROVIDER: 'cloud',
    WHATSAPP_API_URL: graph.apiUrl,
    WHATSAPP_PHONE_NUMBER_ID: graph.phoneNumberId,
    WHATSAPP_ACCESS_TOKEN: graph.accessToken,
    WHATSAPP_APP_SECRET: appSecret,
    WHATSAPP_VERIFY_TOKEN: 'bench',
  };
  const config = loadConfig(workerEnv);
  const db = createDb(pg.url('wathiq'), { poolMax: 30 });
  await migrateLatest(db);
  const client = createTemporalClient({ address: temporal.address, namespace: 'default' });
  // The worker runs as its own process, as deployed (`npm run start:worker`), so it has a core of its own.
  const workerProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker'], {
    env: { ...process.env, ...workerEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => workerProcess.kill('SIGKILL')); // never leave the worker behind
  await new Promise<void>((resolve, reject) => {
    workerProcess.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('Wathiq is running')) resolve();
    });
    workerProcess.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  const api = await startApiServer(
    {
      config,
      db,
      temporal: client,
      logger,
      rateLimiter: createRateLimiter(config, db),
      storage: createStorage(config),
    },
    '127.0.0.1',
    0,
  );
  const base = `${api.url}/api/v1`;

  const account = await accountsStore(db).create({
    name: 'Bench Co',
    email: `bench-${Date.now()}@example.test`,
    passwordHash: await hashPassword('bench-password-123'),
    plan: 'enterprise',
  });
  const key = await issueApiKey(db, { accountId: account.id, name: 'bench' });
  const auth = { authorization: `Bearer ${key.apiKey.key}:${key.secret}` };
  const pdf = await makePdf(1, 'Bench');

  // Baseline: the bare round trip to PostgreSQL and the Temporal server, measured in this same run.
  const healthStart = performance.now();
  await runPool(HEALTH_CHECKS, CONCURRENCY, async () => {
    const res = await fetch(`${base}/health`);
    if (res.status !== 200) throw new Error(`health ${res.status}`);
  });
  const healthRate = HEALTH_CHECKS / ((performance.now() - healthStart) / 1000);

  // Each approver has their own phone number, so a message tells us whom to play.
  let seq = 0;
  const phone = () => `96650${String(1_000_000 + seq++).slice(-7)}`;
  const approversOf = new Map<string, { action: string }>();
  const done = new Map<string, () => void>();

  const act = async (r: RecordedRequest) => {
    const to = (r.body as { to: string }).to;
    const approver = approversOf.get(to);
    const template = (
      r.body as {
        template: {
          components: {
            type: string;
            sub_type?: string;
            parameters: { text?: string; payload?: string }[];
          }[];
        };
      }
    ).template;
    if (!approver || !/approval_request/.test(JSON.stringify(template))) return;
    const buttons = template.components.filter((c) => c.type === 'button');
    if (approver.action === 'sign') {
      const token = buttons.find((b) => b.sub_type === 'url')!.parameters[0]!.text!;
      const res = await fetch(`${api.url}/a/${token}/complete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ typed_name: 'Bench Signer' }),
      });
      if (res.status !== 200) throw new Error(`page ${res.status} ${await res.text()}`);
    } else {
      const payload = buttons.find((b) => b.sub_type === 'quick_reply')!.parameters[0]!.payload!;
      const { body, headers } = signedNotification(buttonReplyNotification({ from: to, payload }), appSecret);
      const res = await fetch(`${base}/webhooks/whatsapp`, { method: 'POST', headers, body });
      if (res.status !== 200) throw new Error(`webhook ${res.status}`);
    }
  };
  // Play every message as it arrives at the fake Graph API.
  let seen = 0;
  let stop = false;
  const inFlight = new Set<Promise<void>>();
  const player = (async () => {
    while (!stop) {
      while (seen < graph.requests.length) {
        const p = act(graph.requests[seen++]!).catch((err: unknown) => console.error(err));
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();

  const temporalPids = await pidsMatching(/temporal server start-dev/);
  const workerPids = [workerProcess.pid!];
  const pgPids = await pidsMatching(new RegExp(`postgres.*${path.join(dir, 'pg')}|postgres:`));
  const ticks = () => Promise.all([cpuTicks(temporalPids), cpuTicks(pgPids), cpuTicks(workerPids)]);
  const [t0, p0, w0] = await ticks();
  const cpu0 = process.cpuUsage();
  const started = performance.now();

  await runPool(N, CONCURRENCY, async (i) => {
    const workflowType = i % 2 === 0 ? 'sequential' : 'parallel';
    const form = new FormData();
    form.append('title', `Bench ${i}`);
    form.append('workflow_type', workflowType);
    ['sign', 'approve_only', 'review_only'].forEach((action, n) => {
      const p = phone();
      approversOf.set(p, { action });
      form.append(`approvers[${n}][name]`, `Approver ${n}`);
      form.append(`approvers[${n}][phone]`, p);
      form.append(`approvers[${n}][action_type]`, action);
    });
    form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'bench.pdf');
    const created = await fetch(`${base}/documents`, { method: 'POST', headers: auth, body: form });
    if (created.status !== 201) throw new Error(`create ${created.status} ${await created.text()}`);
    const { data } = (await created.json()) as { data: { id: string } };
    const approved = new Promise<void>((resolve) => done.set(data.id, resolve));
    const sent = await fetch(`${base}/documents/${data.id}/send`, { method: 'POST', headers: auth });
    if (sent.status !== 200) throw new Error(`send ${sent.status} ${await sent.text()}`);
    // Await the result of the document's workflow: it completes once the document is approved.
    await client.client.workflow.getHandle(`document-${data.id}`).result();
    done.get(data.id)?.();
    await approved;
  });
  const seconds = (performance.now() - started) / 1000;
  const [t1, p1, w1] = await ticks();
  const cpu1 = process.cpuUsage(cpu0);
  stop = true;
  await player;
  await Promise.all(inFlight);

  const rows = await db.raw<{ rows: { ms: number }[] }>(
    `
    SELECT EXTRACT(EPOCH FROM (e.created_at - MAX(a.acted_at))) * 1000 AS ms
      FROM document_events e JOIN approvers a ON a.document_id = e.document_id
     WHERE e.event = 'document.approved' AND e.account_id = ?
     GROUP BY e.id, e.created_at`,
    [account.id],
  );
  const latencies = rows.rows.map((r) => Number(r.ms)).sort((a, b) => a - b);
  const hz = 100; // USER_HZ on Linux
  const wall = seconds;
  const share = (t: number) => `${((t / hz / wall) * 100).toFixed(0)}% of one core`;

  const rate = N / seconds;
  console.log(
    `\nWathiq lifecycle benchmark — ${N} documents (3 approvers: sign on the page, approve and review by WhatsApp button), concurrency ${CONCURRENCY}, ${os.cpus().length} cores`,
  );
  console.log(
    `  baseline  GET /health round trip (API → PostgreSQL + Temporal server): ${healthRate.toFixed(1)}/s`,
  );
  console.log(
    `  documents created → sent → approved (signed PDF included): ${rate.toFixed(2)} documents/s  (${(rate / healthRate).toFixed(4)} × the health rate)`,
  );
  console.log(
    `  last action → approved: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms (${latencies.length} documents)`,
  );
  console.log(
    `  CPU over ${wall.toFixed(1)} s: Temporal server ${share(t1 - t0)}, worker ${share(w1 - w0)}, PostgreSQL ${share(p1 - p0)}, API + benchmark driver ${(((cpu1.user + cpu1.system) / 1e6 / wall) * 100).toFixed(0)}% of one core`,
  );
  console.log(`  WhatsApp messages sent: ${graph.requests.length}`);

  await api.stop();
  workerProcess.kill('SIGTERM');
  await new Promise((r) => workerProcess.once('exit', r));
  await client.close();
  await db.destroy();
  await graph.close();
  await temporal.stop();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}

async function runPool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
