/**
 * `GET /documents/{id}` under load, as an API client feels it: `connections` concurrent HTTP/1.1 keep-alive
 * connections asking for random documents of several accounts, each request with one of its account's keys. The
 * driver runs in a child process of its own, so its work does not share an event loop with the server it measures
 * (bench:lifecycle runs the API in its own process), and reads each answer with as little allocation as it can
 * (`keep-alive-connection.ts`), so its own GC pauses add as little as they can to the latencies it measures.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { openKeepAliveConnection, type KeepAliveConnection } from './keep-alive-connection.ts';
import type { Span } from './read-tail.ts';

/** The documents of one account, and the `Authorization` headers of the keys that read them (used in turn). */
export interface ReadAccount {
  ids: string[];
  authorizations: string[];
}

export interface ReadLoad {
  /** Where `/documents/{id}` is: the API's `…/api/v1` or the naive handler's origin. */
  base: string;
  accounts: ReadAccount[];
  requests: number;
  connections: number;
}

export interface ReadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than 200 (by status) and requests that got no answer ("error"). */
  failures: Record<string, number>;
  /** CPU seconds the driver's own process spent on the run. */
  driverCpuSeconds: number;
  /**
   * Each request's start (epoch ms, `performance.timeOrigin + now()`, comparable across this machine's processes)
   * and its latency (ms), in the order sent: to line the slowest up with what the server did meanwhile.
   */
  startedAt: number[];
  latencies: number[];
  /** The driver's own GC pauses during the run (epoch ms): each delays every answer it has yet to read. */
  driverGc: Span[];
}

/**
 * Requests one key may make within a minute before the plan limit answers 429 (enterprise allows 1,000): a run
 * spreads its requests over enough keys to stay below it, as that many clients would.
 */
export const READS_PER_KEY = 900;

/** Keys each account needs so that `requests`, spread evenly over `accounts`, stay under READS_PER_KEY each. */
export const keysPerAccount = (requests: number, accounts: number): number =>
  Math.max(1, Math.ceil(requests / accounts / READS_PER_KEY));

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Request n goes to account n mod accounts, a random document of it, and its keys in turn. */
async function drive(load: ReadLoad): Promise<ReadResult> {
  const url = new URL(load.base);
  const prefix = url.pathname.replace(/\/$/, '');
  const ms = new Float64Array(load.requests);
  const startedAt = new Float64Array(load.requests);
  const failures: Record<string, number> = {};
  const turns = load.accounts.map(() => 0);
  let next = 0;
  const driverGc: Span[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const start = performance.timeOrigin + e.startTime;
      driverGc.push({ start, end: start + e.duration });
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: load.connections }, async () => {
      let connection: KeepAliveConnection | undefined;
      while (next < load.requests) {
        const n = next++;
        const a = n % load.accounts.length;
        const account = load.accounts[a]!;
        const id = account.ids[Math.floor(Math.random() * account.ids.length)]!;
        const turn = turns[a]!;
        turns[a] = turn + 1;
        const authorization = account.authorizations[turn % account.authorizations.length]!;
        const sent = performance.now();
        startedAt[n] = performance.timeOrigin + sent;
        try {
          connection ??= await openKeepAliveConnection(url.origin);
          // The body is read to its end and dropped: decoding it would be the driver's allocation, not the server's.
          const status = await connection.get(`${prefix}/documents/${id}`, { authorization });
          if (status !== 200) failures[status] = (failures[status] ?? 0) + 1;
        } catch {
          failures.error = (failures.error ?? 0) + 1;
          connection?.close();
          connection = undefined; // a failed connection is not used again: the next request opens another
        }
        ms[n] = performance.now() - sent;
      }
      connection?.close();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  gc.disconnect();
  const latencies = Array.from(ms);
  ms.sort();
  return {
    requests: load.requests,
    rps: load.requests / seconds,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    failures,
    driverCpuSeconds: (user + system) / 1e6,
    startedAt: Array.from(startedAt),
    latencies,
    driverGc,
  };
}

/** Runs one load in a child process and answers its result. */
export function driveReads(load: ReadLoad): Promise<ReadResult> {
  const child = fork(fileURLToPath(import.meta.url), ['--drive'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (result) => {
      child.disconnect();
      resolve(result as ReadResult);
    });
    child.once('exit', (code) => reject(new Error(`the read driver exited (${code}) without a result`)));
    child.send(load);
  });
}

if (process.argv[2] === '--drive') {
  process.once('message', (load) => {
    void drive(load as ReadLoad).then((result) => process.send!(result));
  });
}
