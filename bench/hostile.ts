/**
 * Hostile uploads against the real API: `npx tsx bench/hostile.ts` (or `npm run bench:hostile`).
 *
 * Starts an embedded PostgreSQL in a scratch folder and a Temporal dev server, then the real API process as
 * production starts it (`node dist/main.js api` with BENCH_FROM_DIST=1, after `npm run build`; otherwise
 * `tsx src/main.ts api`), default PDF limits, on a loopback port. Then, timing GET /api/v1/health one request
 * after another from this process, in phases of BENCH_SECONDS:
 *   1. baseline: health alone;
 *   2. control: BENCH_SENDERS loops uploading a form without a file (refused before any PDF work), the same
 *      request load as the bombs without the bombs;
 *   3. decompression bombs: BENCH_SENDERS loops uploading, in turn, the 1 KB object stream that inflates twice to
 *      256 MB (measured on main: 2.4 s of blocked event loop), a 150 KB one that inflates to 64 GB, and a content
 *      stream behind six filters (at most BENCH_BOMBS uploads);
 *   4. heap bombs, the worst the pre-scan lets through: a 1 MB file whose object stream decodes (within 16x its
 *      size) to a 15 MB string that pdf-lib builds a character at a time, until the inspection thread's heap or
 *      time limit ends it (BENCH_HEAP_BOMBS uploads, two at a time).
 * For each phase: health p50/p99 and the API process's peak RSS (Linux VmHWM, reset between phases), and the
 * answers the uploads got. Targets from the issue: health p99 < 50 ms and peak RSS < 400 MB while bombs arrive.
 * Uploads go round KEYS API keys, so the per-key rate limit stays out of the way. Loopback only; every loop is
 * bounded in count and time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueApiKey } from '../src/features/accounts/api-keys.ts';
import { hashPassword } from '../src/auth/passwords.ts';
import { createDb } from '../src/db/knex.ts';
import { migrateLatest } from '../src/db/migrate.ts';
import { accountsStore } from '../src/features/accounts/accounts-store.ts';
import { createLogger } from '../src/logger.ts';
import { PDF_LIMIT_DEFAULTS } from '../src/pdf/limits.ts';
import { startEmbeddedPostgres } from '../src/runtime/embedded-postgres.ts';
import { startTemporalDevServer } from '../src/runtime/temporal-dev-server.ts';
import { buildPdf, deflated, longFilterChainPdf, objectStreamBomb } from '../test/helpers/pdf-bombs.ts';
import { freePort } from '../test/setup/free-port.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BOMBS = Number(process.env.BENCH_BOMBS ?? 2000);
const SENDERS = Number(process.env.BENCH_SENDERS ?? 2);
const HEAP_BOMBS = Number(process.env.BENCH_HEAP_BOMBS ?? 6);
/** BENCH_FROM_DIST=1: the server is `node dist/main.js api` (npm run build first); else `tsx src/main.ts api`. */
const FROM_DIST = process.env.BENCH_FROM_DIST === '1';
/** The API rate-limits per key: the uploads go round this many keys of one account. */
const KEYS = 50;
const TARGET_P99_MS = 50;
const TARGET_RSS_MB = 400;
const MiB = 1024 * 1024;

/** Peak RSS of a process since the last reset (Linux: VmHWM, reset through clear_refs). */
async function peakRssMb(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const kb = status && /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : undefined;
}

async function resetPeakRss(pid: number): Promise<boolean> {
  return writeFile(`/proc/${pid}/clear_refs`, '5').then(
    () => true,
    () => false,
  );
}

function multipart(pdf: Buffer | undefined): { body: Buffer; contentType: string } {
  const boundary = `wathiqhostile${randomBytes(6).toString('hex')}`;
  const title = `--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nHostile\r\n`;
  const file = pdf
    ? [
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="hostile.pdf"\r\n` +
            'Content-Type: application/pdf\r\n\r\n',
        ),
        pdf,
        Buffer.from('\r\n'),
      ]
    : [];
  return {
    body: Buffer.concat([Buffer.from(title), ...file, Buffer.from(`--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

interface Bomb {
  name: string;
  body: Buffer;
  contentType: string;
}

function bomb(name: string, pdf: Buffer): Bomb {
  return {
    name: `${name} (${pdf.length < MiB ? `${Math.round(pdf.length / 1024)} KB` : `${(pdf.length / MiB).toFixed(1)} MB`})`,
    ...multipart(pdf),
  };
}

interface Phase {
  name: string;
  health: number[];
  healthFailures: number;
  peakRssMb: number | undefined;
  answers: Map<string, number>;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  /** A 1 MB file (an unreferenced stream of random bytes) whose object stream decodes to a 15 MB literal string. */
  const heapBomb = (): Buffer => {
    const content = Buffer.concat([Buffer.from('100 0 ('), Buffer.alloc(15 * MiB, 'a'), Buffer.from(')')]);
    return buildPdf([
      { dict: '', data: randomBytes(MiB) },
      { dict: '/Type /ObjStm /N 1 /First 6 /Filter /FlateDecode', data: deflated(content) },
    ]);
  };

  const scratch = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bench-hostile-'));
  await chmod(scratch, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
  const logger = createLogger({ logLevel: 'warn' });
  const pg = await startEmbeddedPostgres({
    dir: path.join(scratch, 'postgres', 'pgdata'),
    port: await freePort(),
    logger,
    database: 'wathiq_bench',
  });
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
    const db = createDb(url, { poolMax: 2 });
    await migrateLatest(db);
    const account = await accountsStore(db).create({
      name: 'Bench',
      email: 'bench@example.test',
      passwordHash: await hashPassword('bench password'),
      plan: 'enterprise',
    });
    const authorizations: string[] = [];
    for (let i = 0; i < KEYS; i++) {
      const { apiKey, secret } = await issueApiKey(db, { accountId: account.id, name: `bench ${i}` });
      authorizations.push(`Bearer ${apiKey.key}:${secret}`);
    }
    await db.destroy();

    // The real API process, as production starts it (or as `npm run start:api` does), on a loopback port.
    const port = await freePort();
    const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
    const entry = FROM_DIST
      ? [path.join(root, 'dist', 'main.js')]
      : [...process.execArgv, path.join(root, 'src', 'main.ts')];
    child = spawn(
      process.execPath,
      [
        ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
        ...entry,
        'api',
      ],
      {
        env: {
          ...process.env,
          NODE_ENV: 'development',
          LOG_LEVEL: 'silent',
          HOST: '127.0.0.1',
          PORT: String(port),
          DATABASE_URL: url,
          TEMPORAL_ADDRESS: temporal.address,
          DATA_DIR: path.join(scratch, 'data'),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const api = `http://127.0.0.1:${port}/api/v1`;
    const exited = new Promise<never>((_, reject) =>
      child!.once('exit', (code) => reject(new Error(`the API exited (${code})`))),
    );
    for (let ready = false; !ready;) {
      await Promise.race([new Promise((r) => setTimeout(r, 200)), exited]);
      ready = (await fetch(`${api}/health`).catch(() => undefined))?.status === 200;
    }
    const pid = child.pid!;
    let nextKey = 0;

    const decompression = [
      bomb('object stream, 2x Flate to 256 MB', objectStreamBomb(256 * MiB)),
      bomb('object stream, 2x Flate to 64 GB', objectStreamBomb(64 * 1024 * MiB)),
      bomb('content stream behind 6 filters', longFilterChainPdf(6)),
    ];
    const heap = [bomb('object stream to a 15 MB string', heapBomb())];

    const upload = async (b: Bomb, answers: Map<string, number>): Promise<void> => {
      const authorization = authorizations[nextKey++ % authorizations.length]!;
      const res = await fetch(`${api}/documents`, {
        method: 'POST',
        headers: { authorization, 'content-type': b.contentType },
        body: b.body,
      }).catch(() => undefined);
      const key = `${b.name}: ${res ? res.status : 'error'}`;
      await res?.arrayBuffer();
      answers.set(key, (answers.get(key) ?? 0) + 1);
    };

    /** Health, one request after another, while `load` runs (or for SECONDS when there is none). */
    const phase = async (
      name: string,
      load?: (answers: Map<string, number>, stop: () => boolean) => Promise<void>,
    ): Promise<Phase> => {
      const reset = await resetPeakRss(pid);
      const answers = new Map<string, number>();
      const health: number[] = [];
      let healthFailures = 0;
      const deadline = performance.now() + SECONDS * 1000;
      let loadDone = !load;
      const stop = () => performance.now() >= deadline;
      const loading = load?.(answers, stop).finally(() => (loadDone = true));
      while (load ? !loadDone : !stop()) {
        const started = performance.now();
        const res = await fetch(`${api}/health`).catch(() => undefined);
        await res?.arrayBuffer();
        if (res?.status === 200) health.push(performance.now() - started);
        else healthFailures += 1;
      }
      await loading;
      return {
        name,
        health: health.sort((a, b) => a - b),
        healthFailures,
        peakRssMb: reset ? await peakRssMb(pid) : undefined,
        answers,
      };
    };

    // The server's first requests, and both inspection threads started (two uploads at once).
    await phase('warm-up', async (answers) => {
      for (const b of decompression) await Promise.all([upload(b, answers), upload(b, answers)]);
    });
    const baseline = await phase('baseline: health alone');
    /** SENDERS loops uploading `files` in turn, until SECONDS or BOMBS uploads in all. */
    const senders = (files: Bomb[]) => async (answers: Map<string, number>, stop: () => boolean) => {
      let sent = 0;
      await Promise.all(
        Array.from({ length: SENDERS }, async (_, s) => {
          for (let i = s; !stop() && sent < BOMBS; i += SENDERS) {
            sent += 1;
            await upload(files[i % files.length]!, answers);
          }
        }),
      );
    };
    // The same request load without any PDF work (the form has no file: 422 before inspection), to tell the cost
    // of handling uploads from the cost of the bombs.
    const control = await phase(
      'uploads without a file',
      senders([{ name: 'no file', ...multipart(undefined) }]),
    );
    const bombs = await phase('decompression bombs', senders(decompression));
    let heapSent = 0;
    const heapPhase = await phase('heap bombs', async (answers) => {
      await Promise.all(
        Array.from({ length: 2 }, async () => {
          while (heapSent < HEAP_BOMBS) {
            heapSent += 1;
            await upload(heap[0]!, answers);
          }
        }),
      );
    });

    const out = (s: string) => process.stdout.write(`${s}\n`);
    out(
      `\nWathiq hostile uploads: ${os.cpus().length} CPUs, server from ${FROM_DIST ? 'dist/ (compiled)' : 'src/ (tsx)'}, default PDF limits, ${SECONDS} s phases, ${SENDERS} bomb senders\n`,
    );
    for (const p of [baseline, control, bombs, heapPhase]) {
      out(`\n${p.name}`);
      out(
        `  health: ${p.health.length} answers, p50 ${percentile(p.health, 50).toFixed(1)} ms, p99 ${percentile(p.health, 99).toFixed(1)} ms, max ${percentile(p.health, 100).toFixed(1)} ms${p.healthFailures ? `, ${p.healthFailures} failed` : ''}`,
      );
      out(
        `  API process peak RSS: ${p.peakRssMb === undefined ? 'unknown (no /proc)' : `${p.peakRssMb.toFixed(0)} MB`}`,
      );
      for (const [answer, count] of [...p.answers].sort()) out(`  ${String(count).padStart(5)} × ${answer}`);
    }
    const base99 = percentile(baseline.health, 99);
    out('\nTargets while bombs are uploaded (health p99 < 50 ms, peak RSS < 400 MB):');
    for (const p of [bombs, heapPhase]) {
      const p99 = percentile(p.health, 99);
      const p99Met = p99 < TARGET_P99_MS && p.healthFailures === 0;
      const rssMet = p.peakRssMb !== undefined && p.peakRssMb < TARGET_RSS_MB;
      out(
        `  ${p.name.padEnd(20)} health p99 ${p99.toFixed(1)} ms (${(p99 / base99).toFixed(1)}x the baseline ${base99.toFixed(1)} ms): ${p99Met ? 'met' : 'MISSED'}; peak RSS ${p.peakRssMb?.toFixed(0) ?? '?'} MB: ${rssMet ? 'met' : 'MISSED'}`,
      );
    }
    // A heap bomb is a file within every decode limit that needs all of a thread's heap: what it can cost is set
    // by configuration, not by the file. Print the settings and the growth over the baseline per thread.
    const threads = Number(
      process.env.PDF_MAX_CONCURRENT_INSPECTIONS ?? PDF_LIMIT_DEFAULTS.maxConcurrentInspections,
    );
    const heapMb = Number(process.env.PDF_WORKER_MEMORY_MB ?? PDF_LIMIT_DEFAULTS.workerMemoryMb);
    if (heapPhase.peakRssMb !== undefined && baseline.peakRssMb !== undefined) {
      const perThread = (heapPhase.peakRssMb - baseline.peakRssMb) / threads;
      out(
        `  heap bombs are bounded by PDF_MAX_CONCURRENT_INSPECTIONS=${threads} × PDF_WORKER_MEMORY_MB=${heapMb}: ` +
          `${perThread.toFixed(0)} MB over the baseline per inspection thread`,
      );
    }
  } finally {
    child?.kill('SIGTERM');
    await new Promise((r) => (child && child.exitCode === null ? child.once('exit', r) : r(undefined)));
    await temporal.stop();
    await pg.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
