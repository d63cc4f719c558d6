/**
 * End-to-end lifecycle benchmark: `npm run bench:lifecycle [-- --documents 200 --concurrency 20]`, or the series
 * that shows whether cost grows linearly: `npm run bench:lifecycle -- --series` (100, 400 and 1,600 documents, one
 * after the other in the same environment; `--sizes 100,400,1600` to choose them).
 *
 * Everything real and on this machine: an embedded PostgreSQL, a Temporal dev server as `npm start` runs it (or, with
 * `--temporal production`, the production-shaped server of the fault tests: PostgreSQL persistence, 4 shards;
 * bench/temporal-shape.ts has the shapes), the worker and the API (each in its own process, as deployed), and, in this
 * process, the driver and a fake WhatsApp Cloud API on loopback standing in for Meta. N documents (3 approvers each,
 * half sequential, half parallel) are created, sent, and driven to `approved` the way approvers act: the WhatsApp
 * button (approve_only, review_only, through Meta-signed webhook calls) and the approval page (sign, with a typed
 * name). Prints, per size:
 *
 * - documents per second end to end, as a ratio against the baseline measured in the same run: the minimal
 *   Temporal round trip (a trivial workflow with one activity, bench/round-trip/workflow.ts, on a worker of this
 *   process), started and awaited with the same concurrency — target ≥ 0.4×;
 * - the Temporal work per document, counted from the real histories of the run's workflows (fetched through the
 *   client): workflow tasks, activity tasks, local activities, timers, history events — against the numbers of
 *   the code before the leaner workflow (RECORDED_BASELINE below), target at most half; and the same counts in round trips
 *   (one round trip's history counted the same way), with the ceiling they set on the ratio above;
 * - p50/p99 of the answer to an approver's action (the page's POST, the WhatsApp webhook) and from the last action to
 *   `approved`, the CPU share of the Temporal server, the worker, PostgreSQL, the API and this process; and the
 *   `GET /health` rate (API → PostgreSQL + Temporal) for reference.
 *
 * With several sizes it also prints the rate at the largest against the smallest: target within 20 %. `--phases`
 * prints where a document's time goes (bench/phases.ts): each step as the driver sees it, and how long Temporal's
 * workflow and activity tasks waited to start and ran.
 */
import { Worker } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { issueApiKey } from '../src/features/accounts/api-keys.ts';
import { hashPassword } from '../src/auth/passwords.ts';
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/db/knex.ts';
import { migrateLatest } from '../src/db/migrate.ts';
import { accountsStore } from '../src/features/accounts/accounts-store.ts';
import { createLogger } from '../src/logger.ts';
import { startEmbeddedPostgres } from '../src/runtime/embedded-postgres.ts';
import { createTemporalClient } from '../src/temporal/client.ts';
import { connectWorker } from '../src/temporal/worker.ts';
import { installTemporalRuntime } from '../src/temporal/runtime.ts';
import {
  buttonReplyNotification,
  signedNotification,
  startFakeGraphApi,
  type RecordedRequest,
} from '../test/fakes/fake-graph-api.ts';
import { freePort } from '../test/setup/free-port.ts';
import { makePdf } from '../test/helpers/pdf.ts';
import { createTaskTimes, createTimeline } from './phases.ts';
import { parseTemporalShape, startBenchTemporal } from './temporal-shape.ts';
import {
  costLines,
  halfRateLines,
  roundTripCoreSeconds,
  storageLines,
  type CoreSeconds,
} from './user-targets.ts';
import { findProcess, perUnit, perUnitOver, treeCoreSeconds, untilQuiet } from './process-cpu.ts';
import { startServiceProcess } from './service-process.ts';
import { formatThreadCpu, threadCoreSeconds } from './thread-cpu.ts';
import { formatPostgresCpu, postgresCoreSeconds } from './postgres-cpu.ts';
import { documentReads } from './document-reads.ts';

const { values: args } = parseArgs({
  options: {
    documents: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '20' },
    'warm-up': { type: 'string' },
    health: { type: 'string', default: '200' },
    'round-trips': { type: 'string', default: '400' },
    series: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    statements: { type: 'string', default: '8' },
    phases: { type: 'boolean', default: false },
    temporal: { type: 'string', default: 'development' },
    paced: { type: 'string', default: '60' },
    reads: { type: 'string', default: '20000' },
  },
});
const TEMPORAL_SHAPE = parseTemporalShape(args.temporal);
const SIZES = (args.sizes ?? (args.series ? '100,400,1600' : args.documents))
  .split(',')
  .map((n) => Number(n.trim()));
const CONCURRENCY = Number(args.concurrency);
/** The accounts the documents are spread over (see where they are created). */
const ACCOUNTS = 4;
const HEALTH_CHECKS = Number(args.health);
const ROUND_TRIPS = Number(args['round-trips']);
/** Documents of the run at half the saturated rate (`--paced`). */
const PACED = Number(args.paced);
/** GET /documents/{id} requests after the load (`--reads`), at READ_CONNECTIONS. */
const READS = Number(args.reads);
const READ_CONNECTIONS = 50;
/**
 * Documents driven before each measured size, not counted (`--warm-up`, by default as many as run at once, so that
 * every PDF thread has started).
 */
const WARM_UP_DOCUMENTS = Number(args['warm-up'] ?? CONCURRENCY);
for (const [flag, n] of [
  ['--documents/--sizes', Math.min(...SIZES)],
  ['--concurrency', CONCURRENCY],
  ['--warm-up', WARM_UP_DOCUMENTS],
  ['--health', HEALTH_CHECKS],
  ['--round-trips', ROUND_TRIPS],
  ['--paced', PACED],
  ['--reads', READS],
] as const) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes whole numbers from 1`);
}
/** Uploads checked at once by the API (PDF_MAX_CONCURRENT_INSPECTIONS); the driver sends no more at a time. */
const UPLOAD_SLOTS = 4;

/** How many of the most frequent PostgreSQL statements each size lists (`--statements`). */
const STATEMENTS_SHOWN = Number(args.statements);
if (!Number.isInteger(STATEMENTS_SHOWN) || STATEMENTS_SHOWN < 0)
  throw new Error('--statements takes a whole number from 0');

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;

/** The Temporal work of one document, counted from its workflow's history. */
interface Work {
  workflowTasks: number;
  activityTasks: number;
  localActivities: number;
  timers: number;
  events: number;
}
const WORK_KEYS = ['workflowTasks', 'activityTasks', 'localActivities', 'timers', 'events'] as const;
const WORK_LABELS: Record<keyof Work, string> = {
  workflowTasks: 'workflow tasks',
  activityTasks: 'activity tasks',
  localActivities: 'local activities',
  timers: 'timers',
  events: 'history events',
};

/**
 * The work per document of the code before the leaner workflow, measured with this benchmark (200 documents, concurrency
 * 20) on `main` at the commit below. The leaner workflow's target: workflow tasks, activity tasks and history events at most
 * half of these (local activities replace activity tasks; the one timer is the document's deadline).
 */
const RECORDED_BASELINE: { commit: string; measured: string; work: Work } = {
  commit: '41b0c28',
  measured: '2026-11-23, 200 documents',
  work: { workflowTasks: 11.96, activityTasks: 9.0, localActivities: 1.0, timers: 1.0, events: 85.29 },
};
const HALVED: (keyof Work)[] = ['workflowTasks', 'activityTasks', 'events'];

/** Counts the event types of one workflow's history: tasks started, activities scheduled, markers, timers. */
function countWork(
  events: { eventType?: unknown; markerRecordedEventAttributes?: { markerName?: string | null } | null }[],
): Work {
  const type = (e: { eventType?: unknown }) => String(e.eventType);
  const is = (e: { eventType?: unknown }, name: string, n: number) =>
    type(e) === name || type(e) === `EVENT_TYPE_${name}` || e.eventType === n;
  const work: Work = {
    workflowTasks: 0,
    activityTasks: 0,
    localActivities: 0,
    timers: 0,
    events: events.length,
  };
  for (const e of events) {
    if (is(e, 'WORKFLOW_TASK_STARTED', 6)) work.workflowTasks++;
    else if (is(e, 'ACTIVITY_TASK_SCHEDULED', 10)) work.activityTasks++;
    else if (is(e, 'TIMER_STARTED', 17)) work.timers++;
    else if (
      is(e, 'MARKER_RECORDED', 25) &&
      e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
    )
      work.localActivities++;
  }
  return work;
}

/** What to stop when the run fails half-way (the normal end stops everything in order). */
const onFailure: (() => Promise<unknown>)[] = [];

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
    // Counts the statements the run sends (printed per document, with the most frequent), and their server time.
    settings: {
      shared_preload_libraries: 'pg_stat_statements',
      'pg_stat_statements.track': 'top',
      'pg_stat_statements.track_planning': 'on',
    },
  });
  onFailure.push(() => pg.stop());
  const temporal = await startBenchTemporal(TEMPORAL_SHAPE, dir, logger);
  onFailure.push(() => temporal.stop());
  const graph = await startFakeGraphApi();
  const appSecret = randomBytes(16).toString('hex');
  const workerEnv = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: dir,
    DATABASE_URL: pg.localUrl('wathiq'),
    DATABASE_POOL_MAX: '30',
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'bench',
    WHATSAPP_PROVIDER: 'cloud',
    WHATSAPP_API_URL: graph.apiUrl,
    WHATSAPP_PHONE_NUMBER_ID: graph.phoneNumberId,
    WHATSAPP_ACCESS_TOKEN: graph.accessToken,
    WHATSAPP_APP_SECRET: appSecret,
    WHATSAPP_VERIFY_TOKEN: 'bench',
    // Uploads are checked UPLOAD_SLOTS at a time; the driver queues them so none is refused with 503.
    PDF_MAX_CONCURRENT_INSPECTIONS: String(UPLOAD_SLOTS),
    // The reads after the load are 50 clients of these few accounts, more than an account's default share of the
    // request rate (3× its plan's per-key limit, all its keys together); the limiter still counts every request.
    RATE_LIMIT_ACCOUNT_MULTIPLIER: '100',
  };
  const config = loadConfig(workerEnv);
  const db = createDb(pg.url('wathiq'), { poolMax: 30 });
  await migrateLatest(db);
  await db.raw('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const client = createTemporalClient({ address: temporal.address, namespace: 'default' });
  // The worker and the API run as their own processes, as deployed (`npm run start:worker`, `start:api`), so each
  // has its CPU time apart from this process's: the driver, the fake Graph API and the round trip's client and worker.
  // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each there (when it exits at the end of the run).
  const workerProcess = await startServiceProcess('worker', workerEnv, process.env.BENCH_CPU_PROF);
  onFailure.push(() => workerProcess.stop());
  const apiPort = await freePort();
  const apiProcess = await startServiceProcess(
    'api',
    { ...workerEnv, HOST: '127.0.0.1', PORT: String(apiPort) },
    process.env.BENCH_CPU_PROF,
    { traceGc: true }, // its pauses during the reads, which stop all 50 clients at once
  );
  onFailure.push(() => apiProcess.stop());
  const api = { url: `http://127.0.0.1:${apiPort}` };
  const base = `${api.url}/api/v1`;

  // Several accounts, documents spread over them, as a deployment serves: one account's plan limit (1,000 requests a
  // minute on enterprise, two requests per document) would otherwise cap the run near 8 documents/s.
  const auths: { authorization: string }[] = [];
  /** The documents the run created, by account (read at random after the load). */
  const createdIds: { accountId: string; ids: string[] }[] = [];
  const passwordHash = await hashPassword('bench-password-123');
  for (let n = 0; n < ACCOUNTS; n++) {
    const account = await accountsStore(db).create({
      name: `Bench Co ${n + 1}`,
      email: `bench-${Date.now()}-${n}@example.test`,
      passwordHash,
      plan: 'enterprise',
    });
    const key = await issueApiKey(db, { accountId: account.id, name: 'bench' });
    auths.push({ authorization: `Bearer ${key.apiKey.key}:${key.secret}` });
    createdIds.push({ accountId: account.id, ids: [] });
  }
  const pdf = await makePdf(1, 'Bench');

  // The same-run baseline: the minimal Temporal round trip (a workflow with one activity), on a worker of this
  // process with a task queue of its own, started and awaited with the documents' concurrency.
  const roundTripConnection = await connectWorker({ address: temporal.address });
  const roundTripWorker = await Worker.create({
    connection: roundTripConnection,
    namespace: 'default',
    taskQueue: 'bench-round-trip',
    workflowsPath: path.resolve(import.meta.dirname, 'round-trip/workflow.ts'),
    activities: { roundTripActivity: (n: number) => Promise.resolve(n) },
  });
  const roundTripRun = roundTripWorker.run();
  const runId = randomBytes(4).toString('hex');
  /** The rate of n round trips, and each one's time, sorted (a slow tail shows a stalled baseline). */
  const roundTrips = async (n: number, label: string): Promise<{ rate: number; ms: number[] }> => {
    const t = performance.now();
    const ms: number[] = [];
    await runPool(n, CONCURRENCY, async (i) => {
      const one = performance.now();
      const out: unknown = await client.client.workflow.execute('roundTripWorkflow', {
        workflowId: `bench-round-trip-${runId}-${label}-${i}`,
        taskQueue: 'bench-round-trip',
        args: [i],
      });
      if (out !== i) throw new Error('round trip answered wrong');
      ms.push(performance.now() - one);
    });
    return { rate: n / ((performance.now() - t) / 1000), ms: ms.sort((a, b) => a - b) };
  };
  await roundTrips(Math.min(40, ROUND_TRIPS), 'warm-up');

  // For reference: the bare API → PostgreSQL + Temporal server round trip (GET /health).
  const healthRate = async () => {
    const t = performance.now();
    await runPool(HEALTH_CHECKS, CONCURRENCY, async () => {
      const res = await fetch(`${base}/health`);
      if (res.status !== 200) throw new Error(`health ${res.status}`);
    });
    return HEALTH_CHECKS / ((performance.now() - t) / 1000);
  };

  // Each approver has their own phone number, so a message tells us whom to play.
  let seq = 0;
  const phone = () => `96650${String(1_000_000 + seq++).slice(-7)}`;
  const approversOf = new Map<string, { action: string; document: number }>();
  /** --phases: each document's steps as the driver sees them (per size). */
  let timeline = createTimeline();

  /** How long each approver waited for the answer to their action (page or button), in ms, per size. */
  let answers: number[] = [];
  /** When each document's latest action was answered (the last one, once the document is approved). */
  const lastAnswer = new Map<number, number>();
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
    timeline.mark(approver.document, 'asked');
    const buttons = template.components.filter((c) => c.type === 'button');
    if (approver.action === 'sign') {
      const token = buttons.find((b) => b.sub_type === 'url')!.parameters[0]!.text!;
      const asked = performance.now();
      const { res, retried } = await again503(() =>
        fetch(`${api.url}/a/${token}/complete`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ typed_name: 'Bench Signer' }),
        }),
      );
      // A retry after a 503 may find the first attempt taken after all (409: already acted).
      if (res.status !== 200 && !(retried && res.status === 409))
        throw new Error(`page ${res.status} ${await res.text()}`);
      answers.push(performance.now() - asked);
      lastAnswer.set(approver.document, performance.now());
      timeline.mark(approver.document, 'answered');
    } else {
      const payload = buttons.find((b) => b.sub_type === 'quick_reply')!.parameters[0]!.payload!;
      const { body, headers } = signedNotification(buttonReplyNotification({ from: to, payload }), appSecret);
      // Meta delivers a webhook again when it is not answered 200; so does this driver after a 503.
      const asked = performance.now();
      const { res } = await again503(() =>
        fetch(`${base}/webhooks/whatsapp`, { method: 'POST', headers, body }),
      );
      if (res.status !== 200) throw new Error(`webhook ${res.status}`);
      answers.push(performance.now() - asked);
      lastAnswer.set(approver.document, performance.now());
      timeline.mark(approver.document, 'answered');
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

  // Each part of the service is a process and its descendants, found by what started it: never by a name alone,
  // which would count the PostgreSQL and Temporal servers of anything else running on the machine.
  const temporalPort = temporal.address.split(':').pop()!;
  const rootOf = async (what: string, pattern: RegExp) => {
    const pid = await findProcess(pattern);
    if (pid === undefined) throw new Error(`no process of ${what} found (${pattern})`);
    return pid;
  };
  const roots = {
    temporal:
      temporal.pid ??
      (await rootOf(
        'the Temporal dev server',
        new RegExp(`temporal server start-dev .*--port ${temporalPort} `),
      )),
    // The production shape's own PostgreSQL is counted with Temporal.
    temporalPostgres: temporal.postgresPattern
      ? await rootOf("Temporal's PostgreSQL", temporal.postgresPattern)
      : undefined,
    postgres: await rootOf("Wathiq's PostgreSQL", new RegExp(`postgres -D ${path.join(dir, 'pg', 'data')} `)),
  };
  /** Core-seconds each part has used so far. */
  const readCpu = async (): Promise<CoreSeconds> => {
    const [temporalCs, temporalPg, worker, postgres, apiCs] = await Promise.all([
      treeCoreSeconds(roots.temporal),
      roots.temporalPostgres === undefined ? 0 : treeCoreSeconds(roots.temporalPostgres),
      treeCoreSeconds(workerProcess.pid),
      treeCoreSeconds(roots.postgres),
      treeCoreSeconds(apiProcess.pid),
    ]);
    const own = process.cpuUsage();
    return {
      temporal: temporalCs + temporalPg,
      worker,
      postgres,
      api: apiCs,
      benchmark: (own.user + own.system) / 1e6,
    };
  };

  const yes = (met: boolean) => (met ? 'met' : 'NOT met');

  console.log(
    `\nWathiq lifecycle benchmark — ${SIZES.join(', ')} documents (3 approvers: sign on the page, approve and review by WhatsApp button, half sequential), concurrency ${CONCURRENCY}, ${WARM_UP_DOCUMENTS} documents of warm-up before each size, ${os.cpus().length} cores, on the ${temporal.label}`,
  );
  const uploads = limiter(UPLOAD_SLOTS);
  /** Creates document i, sends it, and waits for its workflow to end (approved, signed PDF made): its id. */
  const driveDocument = async (i: number): Promise<string> => {
    const auth = auths[i % ACCOUNTS]!;
    const workflowType = i % 2 === 0 ? 'sequential' : 'parallel';
    const form = new FormData();
    form.append('title', `Bench ${i}`);
    form.append('workflow_type', workflowType);
    ['sign', 'approve_only', 'review_only'].forEach((action, n) => {
      const p = phone();
      approversOf.set(p, { action, document: i });
      form.append(`approvers[${n}][name]`, `Approver ${n}`);
      form.append(`approvers[${n}][phone]`, p);
      form.append(`approvers[${n}][action_type]`, action);
    });
    form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'bench.pdf');
    timeline.mark(i, 'create', workflowType);
    let created = await uploads.run(() =>
      fetch(`${base}/documents`, { method: 'POST', headers: auth, body: form }),
    );
    // The upload check's concurrency limit (PDF_CHECK_*) answers 503 with Retry-After: wait and send again.
    while (created.status === 503 && created.headers.get('retry-after')) {
      await new Promise((r) => setTimeout(r, Number(created.headers.get('retry-after')) * 1000));
      created = await fetch(`${base}/documents`, { method: 'POST', headers: auth, body: form });
    }
    if (created.status !== 201) throw new Error(`create ${created.status} ${await created.text()}`);
    const { data } = (await created.json()) as { data: { id: string } };
    createdIds[i % ACCOUNTS]!.ids.push(data.id);
    timeline.mark(i, 'created');
    const sent = await fetch(`${base}/documents/${data.id}/send`, { method: 'POST', headers: auth });
    if (sent.status !== 200) throw new Error(`send ${sent.status} ${await sent.text()}`);
    timeline.mark(i, 'sent');
    // Await the result of the document's workflow: it completes once the document is approved.
    await client.client.workflow.getHandle(`document-${data.id}`).result();
    timeline.mark(i, 'approved');
    return data.id;
  };
  const rates: { n: number; rate: number }[] = [];
  let docNo = 0;
  // The API compresses its page assets in the background once it answers (seconds of brotli in a fresh DATA_DIR):
  // that is start-up work, not the round trip's nor the documents', so the measuring starts once both are quiet.
  for (const [name, pid] of [
    ['API', apiProcess.pid],
    ['worker', workerProcess.pid],
  ] as const) {
    const quiet = await untilQuiet(pid);
    if (quiet.share > 0.05)
      console.log(
        `  (the ${name} still used ${(quiet.share * 100).toFixed(0)}% of a core after ${(quiet.waitedMs / 1000).toFixed(0)} s)`,
      );
  }
  for (const N of SIZES) {
    const health = await healthRate();
    // The baseline in two halves, one before the documents and one after them, so that what the machine does
    // meanwhile (its speed drifts by 10 to 20 % within minutes) weighs on both sides of the ratio alike.
    const tripsBefore = Math.ceil(ROUND_TRIPS / 2);
    const rt0 = await readCpu();
    const before = await roundTrips(tripsBefore, `n${N}`);
    const rt1 = await readCpu();
    // A few documents right before the measured ones, as the round trip has its warm-up: the API's and the worker's
    // PDF threads (stopped after 30 s idle) start again, the code paths compile, the pools open their connections.
    await runPool(WARM_UP_DOCUMENTS, CONCURRENCY, async () => {
      await driveDocument(docNo++);
    });
    const messagesBefore = graph.requests.length;
    answers = [];
    timeline = createTimeline();
    await db.raw('SELECT pg_stat_statements_reset()');
    const threads0 = await Promise.all([workerProcess.pid, apiProcess.pid].map(threadCoreSeconds));
    const postgres0 = await postgresCoreSeconds(roots.postgres);
    const cpu0 = await readCpu();
    const started = performance.now();
    const ids: string[] = [];
    await runPool(N, CONCURRENCY, async () => {
      ids.push(await driveDocument(docNo++));
    });
    const seconds = (performance.now() - started) / 1000;
    const cpu1 = await readCpu();
    const threads1 = await Promise.all([workerProcess.pid, apiProcess.pid].map(threadCoreSeconds));
    const postgres1 = await postgresCoreSeconds(roots.postgres);
    const cpu = perUnit(cpu0, cpu1, 1);
    const statements = await db.raw<{
      rows: { calls: string; ms: number; plan_ms: number; query: string }[];
    }>(
      `SELECT calls, total_exec_time + total_plan_time AS ms, total_plan_time AS plan_ms, regexp_replace(query, '\\s+', ' ', 'g') AS query
         FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC`,
    );
    const statementCount = statements.rows.reduce((n, r) => n + Number(r.calls), 0);

    // The second half of the baseline, once the service has finished the documents' work (webhook deliveries).
    for (const pid of [workerProcess.pid, apiProcess.pid, roots.temporal]) await untilQuiet(pid);
    const tripsAfter = ROUND_TRIPS - tripsBefore;
    const rt2 = await readCpu();
    const after = await roundTrips(tripsAfter, `n${N}-after`);
    const rt3 = await readCpu();
    const roundTripCost = perUnitOver(
      [
        [rt0, rt1],
        [rt2, rt3],
      ],
      ROUND_TRIPS,
    );
    const roundTripRate = ROUND_TRIPS / (tripsBefore / before.rate + tripsAfter / after.rate);
    const roundTripMs = [...before.ms, ...after.ms].sort((a, b) => a - b);
    const tripHalf = (a: CoreSeconds, b: CoreSeconds, n: number) =>
      roundTripCoreSeconds(perUnit(a, b, n)).toFixed(4);
    const roundTripHalves = `      the round trip's core-seconds: ${tripHalf(rt0, rt1, tripsBefore)} in the ${tripsBefore} before the documents, ${tripHalf(rt2, rt3, tripsAfter)} in the ${tripsAfter} after them`;

    const rows = await db.raw<{ rows: { ms: number }[] }>(
      `
      SELECT EXTRACT(EPOCH FROM (e.created_at - MAX(a.acted_at))) * 1000 AS ms
        FROM document_events e JOIN approvers a ON a.document_id = e.document_id
       WHERE e.event = 'document.approved' AND e.document_id = ANY(?::uuid[])
       GROUP BY e.id, e.created_at`,
      [ids],
    );
    const latencies = rows.rows.map((r) => Number(r.ms)).sort((a, b) => a - b);

    // The Temporal work, from the real histories of this size's workflows.
    const total: Work = { workflowTasks: 0, activityTasks: 0, localActivities: 0, timers: 0, events: 0 };
    const taskTimes = createTaskTimes();
    await runPool(ids.length, 10, async (i) => {
      const history = await client.client.workflow.getHandle(`document-${ids[i]}`).fetchHistory();
      taskTimes.add(history.events ?? []);
      const w = countWork(history.events ?? []);
      for (const k of WORK_KEYS) total[k] += w[k];
    });
    const per = (k: keyof Work) => total[k] / ids.length;
    // The same counts for one round trip of this size's baseline: what a document asks of Temporal, in round trips.
    const roundTripWork = countWork(
      (await client.client.workflow.getHandle(`bench-round-trip-${runId}-n${N}-0`).fetchHistory()).events ??
        [],
    );

    const rate = N / seconds;
    rates.push({ n: N, rate });
    const ratio = rate / roundTripRate;
    console.log(`\n  ${N} documents`);
    console.log(
      `    baseline  minimal Temporal round trip (workflow + one activity, concurrency ${CONCURRENCY}): ${roundTripRate.toFixed(1)}/s (each p50 ${percentile(roundTripMs, 50).toFixed(0)} ms, p99 ${percentile(roundTripMs, 99).toFixed(0)} ms, max ${roundTripMs.at(-1)!.toFixed(0)} ms); GET /health ${health.toFixed(1)}/s`,
    );
    // A round trip whose first workflow task waited in a task queue partition no poller was on takes about 2 s
    // (seen on the development server with its 4 partitions, for the baseline's workflows): the rate is then not
    // Temporal's round trip but its stalls.
    const stalled = roundTripMs.filter((t) => t > 1000).length;
    if (stalled)
      console.log(
        `              ${stalled} of ${roundTripMs.length} round trips took over a second: the baseline above includes stalls`,
      );
    console.log(
      `    documents created → sent → approved (signed PDF included): ${rate.toFixed(2)} documents/s = ${ratio.toFixed(3)}× the round trip — target ≥ 0.4×: ${yes(ratio >= 0.4)}`,
    );
    console.log(
      `    Temporal work per document (from ${ids.length} histories; recorded baseline: main ${RECORDED_BASELINE.commit}, ${RECORDED_BASELINE.measured}):`,
    );
    for (const k of WORK_KEYS) {
      const base0 = RECORDED_BASELINE.work[k];
      const target = HALVED.includes(k)
        ? ` — target ≤ ${(base0 / 2).toFixed(2)} (half): ${yes(per(k) <= base0 / 2)}`
        : '';
      console.log(
        `      ${WORK_LABELS[k].padEnd(17)} ${per(k).toFixed(2).padStart(7)}  (baseline ${base0.toFixed(2)}, ${(per(k) / base0).toFixed(2)}×)${target}`,
      );
    }
    // The ceiling the round trip sets: were a document's Temporal work all it cost, at most 1/(the smallest of these)
    // of a round trip's rate.
    const inRoundTrips = (['workflowTasks', 'activityTasks', 'events'] as const).map(
      (k) => [k, per(k) / roundTripWork[k]] as const,
    );
    const fewest = Math.min(...inRoundTrips.map(([, n]) => n));
    // A kind of work a document does none of (no activity task: its finalization runs as a local activity) bounds
    // nothing.
    const ceiling =
      fewest > 0
        ? `with nothing but its Temporal work a document would reach at most ${(1 / fewest).toFixed(2)}× the round trip`
        : 'a kind of work a document does none of sets no ceiling on its rate';
    console.log(
      `    that is ${inRoundTrips.map(([k, n]) => `${n.toFixed(2)}× a round trip's ${WORK_LABELS[k]} (${roundTripWork[k]})`).join(', ')}: ${ceiling}`,
    );
    const answered = [...answers].sort((a, b) => a - b);
    console.log(
      `    an approver's action (approval page or WhatsApp button) answered: p50 ${percentile(answered, 50).toFixed(0)} ms, p99 ${percentile(answered, 99).toFixed(0)} ms (${answered.length} actions)`,
    );
    console.log(
      `    last action → approved: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms (${latencies.length} documents)`,
    );
    const share = (cs: number) => `${((cs / seconds) * 100).toFixed(0)}%`;
    console.log(
      `    CPU over ${seconds.toFixed(1)} s, in shares of one core: ${temporal.label} ${share(cpu.temporal)}, worker ${share(cpu.worker)}, PostgreSQL ${share(cpu.postgres)}, API ${share(cpu.api)}; the benchmark's process (driver, fake Graph API) ${share(cpu.benchmark)}`,
    );
    for (const l of costLines(perUnit(cpu0, cpu1, N), roundTripCost, os.loadavg()[0]!)) console.log(l);
    console.log(roundTripHalves);
    // By kind of thread: each moves with the code that runs there, less with the machine's neighbours.
    for (const [n, name] of ['worker', 'API'].entries())
      console.log(
        `      the ${name} by thread, core-seconds per document: ${formatThreadCpu(perUnit(threads0[n]!, threads1[n]!, N))}`,
      );
    console.log(
      `      PostgreSQL by process, core-seconds per document: ${formatPostgresCpu(perUnit(postgres0, postgres1, N))}`,
    );
    if (args.phases) for (const l of [...timeline.lines(), ...taskTimes.lines()]) console.log(l);
    console.log(`    WhatsApp messages sent: ${graph.requests.length - messagesBefore}`);
    console.log(
      `    PostgreSQL statements: ${(statementCount / N).toFixed(1)} per document (all processes), the most frequent:`,
    );
    for (const r of statements.rows.slice(0, STATEMENTS_SHOWN)) {
      console.log(`      ${(Number(r.calls) / N).toFixed(2).padStart(7)}  ${r.query.slice(0, 110)}`);
    }
    // Planning and execution as PostgreSQL times them (not its CPU: a wait on a lock or on the disk counts too).
    const serverMs = statements.rows.reduce((n, r) => n + Number(r.ms), 0);
    const planMs = statements.rows.reduce((n, r) => n + Number(r.plan_ms), 0);
    console.log(
      `    PostgreSQL planning and execution: ${(serverMs / N).toFixed(2)} ms per document (planning ${(planMs / N).toFixed(2)} ms), the longest in all:`,
    );
    for (const r of [...statements.rows]
      .sort((a, b) => Number(b.ms) - Number(a.ms))
      .slice(0, STATEMENTS_SHOWN)) {
      console.log(
        `      ${(Number(r.ms) / N).toFixed(3).padStart(7)} ms  (${(Number(r.calls) / N).toFixed(2)} calls)  ${r.query.slice(0, 100)}`,
      );
    }
  }
  if (rates.length > 1) {
    const smallest = rates[0]!;
    const largest = rates[rates.length - 1]!;
    const r = largest.rate / smallest.rate;
    console.log(
      `\n  linear cost: ${largest.rate.toFixed(2)} documents/s at ${largest.n} against ${smallest.rate.toFixed(2)} at ${smallest.n} = ${r.toFixed(3)}× — target within 20 % (≥ 0.8×): ${yes(r >= 0.8)}`,
    );
  }
  // At half the saturated rate (the last size's): documents arrive on a clock instead of as fast as they finish, so
  // an approver's wait is measured with the service busy but not queueing.
  const saturatedRate = rates.at(-1)!.rate;
  const pacedRate = saturatedRate / 2;
  answers = [];
  const toPdf: number[] = [];
  const pacedStart = performance.now();
  await Promise.all(
    Array.from({ length: PACED }, async (_, k) => {
      await new Promise((r) => setTimeout(r, (k * 1000) / pacedRate));
      const i = docNo++;
      const id = await driveDocument(i);
      const auth = auths[i % ACCOUNTS]!;
      for (;;) {
        const res = await fetch(`${base}/documents/${id}/download`, { headers: auth });
        if (res.status === 200) {
          await res.arrayBuffer();
          break;
        }
        await res.body?.cancel();
        await new Promise((r) => setTimeout(r, 5));
      }
      toPdf.push(performance.now() - lastAnswer.get(i)!);
    }),
  );
  for (const l of halfRateLines({
    saturatedRate,
    pacedRate,
    documents: PACED,
    achievedRate: PACED / ((performance.now() - pacedStart) / 1000),
    tapsMs: answers,
    lastActionToPdfMs: toPdf,
  }))
    console.log(l);
  for (const l of await storageLines(db, docNo)) console.log(l);
  // The load is over: the driver stops playing approvers and the round-trip baseline's worker stops polling, so
  // neither takes the cores while the reads are measured (nor shares this process with the naive handler).
  stop = true;
  await player;
  await Promise.all(inFlight);
  roundTripWorker.shutdown();
  await roundTripRun;
  const reads = await documentReads({
    db,
    databaseUrl: pg.localUrl('wathiq'),
    poolMax: config.database.poolMax,
    apiBase: base,
    apiCoreSeconds: () => treeCoreSeconds(apiProcess.pid),
    apiGc: apiProcess.gc,
    documents: createdIds,
    requests: READS,
    connections: READ_CONNECTIONS,
    others: async () => {
      const [temporalCs, temporalPg, worker, postgres] = await Promise.all([
        treeCoreSeconds(roots.temporal),
        roots.temporalPostgres === undefined ? 0 : treeCoreSeconds(roots.temporalPostgres),
        treeCoreSeconds(workerProcess.pid),
        treeCoreSeconds(roots.postgres),
      ]);
      return { worker, Temporal: temporalCs + temporalPg, PostgreSQL: postgres };
    },
  });
  for (const l of reads) console.log(l);

  await roundTripConnection.close();
  await apiProcess.stop();
  await workerProcess.stop();
  await client.close();
  await db.destroy();
  await graph.close();
  await temporal.stop();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}

/** Sends again after a 503 (the service asks to try again shortly), up to 10 times, a second apart. */
async function again503(send: () => Promise<Response>): Promise<{ res: Response; retried: boolean }> {
  let res = await send();
  let retried = false;
  for (let i = 0; res.status === 503 && i < 10; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    retried = true;
    res = await send();
  }
  return { res, retried };
}

/** At most `n` of the functions given to `run` at once; the others wait their turn. */
function limiter(n: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return {
    async run<T>(fn: () => Promise<T>): Promise<T> {
      if (active >= n) await new Promise<void>((r) => waiting.push(r));
      else active++;
      try {
        return await fn();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else active--;
      }
    },
  };
}

async function runPool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

main().catch(async (err: unknown) => {
  console.error(err);
  for (const stop of onFailure.reverse()) await stop().catch(() => undefined);
  process.exit(1);
});
