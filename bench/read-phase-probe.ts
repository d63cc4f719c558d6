/**
 * What else ran while bench:lifecycle measured `GET /documents/{id}`: each process's CPU (the server, the read
 * driver, the service's other processes and everything else on the machine, from /proc), the server's event-loop
 * delay and its garbage-collection pauses. With 50 closed-loop connections a request's latency is the connections
 * divided by the rate (Little's law), so the p99 follows the rate, and the rate follows the CPU the two cores have
 * left for the server, PostgreSQL and the driver: these figures say where it went.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import type { GcTrace } from './gc-trace.ts';
import { HZ } from './process-cpu.ts';
import {
  constants,
  monitorEventLoopDelay,
  PerformanceObserver,
  type PerformanceEntry,
} from 'node:perf_hooks';

/**
 * Core-seconds the service's other processes (the worker, Temporal, PostgreSQL) have used so far, by name, each with
 * everything under it (`treeCoreSeconds`): backends that come and go stay counted in their parent's time.
 */
export type ProcessCpu = () => Promise<Record<string, number>>;

/** Core-seconds each name used between two readings; a reading that went down (a process gone) counts nothing. */
function usedSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const used: Record<string, number> = {};
  for (const [name, seconds] of Object.entries(after))
    used[name] = Math.max(0, seconds - (before[name] ?? 0));
  return used;
}

/** CPU seconds every core of the machine spent busy (not idle, not waiting on I/O), from /proc/stat. */
async function machineBusySeconds(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - ticks[3]! - ticks[4]!) / HZ;
}

export interface PhaseFigures {
  seconds: number;
  requests: number;
  loadAverage: number;
  /** Cores (CPU seconds a second) used by each: the server, the driver, the others named, the rest of the machine. */
  cores: Record<string, number>;
  /** Whether the server ran in this process, so that its event loop and GC below are its own. */
  serverObserved: boolean;
  /** Whether the GC figures below are the server's: its own process's, read from its `--trace-gc` lines. */
  serverGcTraced: boolean;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  gcPauses: number;
  gcMsTotal: number;
  gcMsMax: number;
  /** Of those, the full (mark-compact) collections, whose pause grows with the heap. */
  gcMajor: number;
  gcMajorMs: number;
  /** The server process's heap in use at the end of the phase. */
  heapUsedMb: number;
  /** What the server allocated between its pauses of the phase, MB, when they come from its --trace-gc lines. */
  gcAllocatedMb?: number;
  /** What outlived its young collection over the phase and stayed in the old generation, MB (GcPause.keptMb). */
  gcKeptMb?: number;
}

const isMajor = (entry: PerformanceEntry) =>
  ((entry as { detail?: { kind?: number } }).detail?.kind ?? 0) === constants.NODE_PERFORMANCE_GC_MAJOR;

/**
 * Starts observing a read phase in the server's process; `stop(driverCpuSeconds)` answers what happened during it.
 * The driver's CPU is its own process's, reported by it. A server in a process of its own has its GC pauses from
 * `serverGc`, when given, and no event-loop figures.
 */
export async function observePhase(
  others: ProcessCpu,
  server: () => Promise<number>,
  serverIsThisProcess: boolean,
  serverGc?: GcTrace,
) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const pauses: number[] = [];
  const major: number[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      pauses.push(entry.duration);
      if (isMajor(entry)) major.push(entry.duration);
    }
  });
  const before = { at: performance.now(), server: await server(), others: await others() };
  const busyBefore = await machineBusySeconds();
  delay.enable();
  // This process's collections are the server's only when it runs here.
  if (serverIsThisProcess) gc.observe({ entryTypes: ['gc'] });
  return async (driverCpuSeconds: number, requests: number): Promise<PhaseFigures> => {
    delay.disable();
    gc.disconnect();
    const seconds = (performance.now() - before.at) / 1000;
    const own = (await server()) - before.server;
    const after = await others();
    const busy = (await machineBusySeconds()) - busyBefore;
    let gcAllocatedMb: number | undefined;
    let gcKeptMb: number | undefined;
    if (!serverIsThisProcess && serverGc) {
      gcAllocatedMb = 0;
      gcKeptMb = 0;
      for (const p of serverGc.since(before.at)) {
        pauses.push(p.ms);
        if (p.major) major.push(p.ms);
        gcAllocatedMb += p.allocatedMb;
        gcKeptMb += p.keptMb;
      }
    }
    const cores: Record<string, number> = { server: own / seconds, driver: driverCpuSeconds / seconds };
    let counted = own + driverCpuSeconds;
    for (const [name, used] of Object.entries(usedSince(before.others, after))) {
      cores[name] = used / seconds;
      counted += used;
    }
    cores['rest of the machine'] = Math.max(0, busy - counted) / seconds;
    return {
      seconds,
      requests,
      serverObserved: serverIsThisProcess,
      serverGcTraced: !serverIsThisProcess && serverGc !== undefined,
      loadAverage: os.loadavg()[0]!,
      cores,
      eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
      eventLoopDelayMaxMs: delay.max / 1e6,
      gcPauses: pauses.length,
      gcMsTotal: pauses.reduce((a, b) => a + b, 0),
      gcMsMax: Math.max(0, ...pauses),
      gcMajor: major.length,
      gcMajorMs: major.reduce((a, b) => a + b, 0),
      heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
      gcAllocatedMb,
      gcKeptMb,
    };
  };
}

export interface QuietWait {
  seconds: number;
  quiet: boolean;
  /** Cores each of the other processes used in the last interval looked at. */
  last: Record<string, number>;
}

/**
 * Waits until the service's other processes have finished the load's work (finalizations, webhooks, time-stamps,
 * the signal relay, autovacuum): until they use less than `maxCores` together over `windowMs`, or `timeoutMs`
 * passes. The reads are then measured on a service at rest, as a client reading later would find it.
 */
export async function waitForQuiet(
  others: ProcessCpu,
  { maxCores = 0.1, windowMs = 2000, timeoutMs = 120_000 } = {},
): Promise<QuietWait> {
  const started = performance.now();
  let previous = await others();
  for (;;) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = await others();
    const last: Record<string, number> = {};
    let total = 0;
    for (const [name, used] of Object.entries(usedSince(previous, now))) {
      last[name] = used / (windowMs / 1000);
      total += last[name];
    }
    previous = now;
    const seconds = (performance.now() - started) / 1000;
    if (total < maxCores || seconds * 1000 >= timeoutMs) return { seconds, quiet: total < maxCores, last };
  }
}

const pct = (cores: number) => `${(cores * 100).toFixed(0)}%`;

/** What a phase's cores went to (share of one core, CPU ms a request), and its server's event loop and GC. */
export function phaseLine(f: PhaseFigures): string {
  const perRequest = (cores: number) => ((cores * f.seconds * 1000) / f.requests).toFixed(3);
  const cores = Object.entries(f.cores)
    .map(([name, c]) => `${name} ${pct(c)} (${perRequest(c)} ms)`)
    .join(', ');
  const gc =
    `${f.gcPauses} GC pauses, ${f.gcMsTotal.toFixed(0)} ms in all (${pct(f.gcMsTotal / 1000 / f.seconds)} of the ` +
    `phase), longest ${f.gcMsMax.toFixed(1)} ms (${f.gcMajor} full, ${f.gcMajorMs.toFixed(0)} ms`;
  return (
    `      CPU over ${f.seconds.toFixed(1)} s, share of one core (CPU ms a request): ${cores}; load average ${f.loadAverage.toFixed(2)}; ` +
    (f.serverObserved
      ? `server event-loop delay p99 ${f.eventLoopDelayP99Ms.toFixed(1)} ms (max ${f.eventLoopDelayMaxMs.toFixed(1)}), ` +
        `${gc}; heap ${f.heapUsedMb.toFixed(0)} MB)`
      : f.serverGcTraced
        ? `the server's own process: ${gc}, from its --trace-gc; ` +
          `${(((f.gcAllocatedMb ?? 0) * 1024) / f.requests).toFixed(1)} KB allocated a request between them, ` +
          `${(((f.gcKeptMb ?? 0) * 1024) / f.requests).toFixed(2)} KB of it kept past a young collection)`
        : `the server's event loop and GC are its own process's (BENCH_CPU_PROF profiles it whole)`)
  );
}

export function quietLine(q: QuietWait): string {
  const last = Object.entries(q.last)
    .map(([name, c]) => `${name} ${pct(c)}`)
    .join(', ');
  // Production runs Node 24 (Dockerfile, .nvmrc); an older Node's figures are not its (AsyncLocalStorage, crypto).
  const node = `on Node ${process.version}`;
  return q.quiet
    ? `    waited ${q.seconds.toFixed(1)} s for the service to finish the load's work (then: ${last} of one core); ${node}`
    : `    the service was still busy after ${q.seconds.toFixed(0)} s (${last} of one core): the reads below share the cores with it; ${node}`;
}

/**
 * With BENCH_CPU_PROF=<dir>, a V8 CPU profile of this process (the server) while `run` runs, written there as
 * `<name>.cpuprofile`, and a sampling profile of what it allocated (`<name>.heapprofile`: what makes the GC's
 * work); otherwise just `run`.
 */
export async function profiled<T>(name: string, run: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return run();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  await session.post('HeapProfiler.enable');
  // Every allocation of its 32 KiB on average is sampled, whether collected since or not.
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  try {
    return await run();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    const { profile: allocations } = await session.post('HeapProfiler.stopSampling');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    await writeFile(path.join(dir, `${name}.heapprofile`), JSON.stringify(allocations));
    session.disconnect();
  }
}

/**
 * Little's law for the closed loop: with `connections` clients each waiting for its answer, the mean latency is the
 * connections over the rate. The CPU the reads themselves need (server, driver, PostgreSQL) caps the rate the
 * machine's cores could give with nothing else running, and so sets the lowest mean latency possible here.
 */
export function floorLine(f: PhaseFigures, connections: number, rps: number): string {
  const cores = os.cpus().length;
  const own = ['server', 'driver', 'PostgreSQL'].reduce((sum, name) => sum + (f.cores[name] ?? 0), 0);
  const msPerRequest = (own * f.seconds * 1000) / f.requests;
  const maxRate = (cores * 1000) / msPerRequest;
  return (
    `      ${connections} connections ÷ ${rps.toFixed(0)} requests/s = ${((connections / rps) * 1000).toFixed(1)} ms mean; ` +
    `server + driver + PostgreSQL need ${msPerRequest.toFixed(3)} CPU ms a request, so ${cores} cores with nothing else ` +
    `running answer at most ${maxRate.toFixed(0)} requests/s, a mean of at least ${((connections / maxRate) * 1000).toFixed(1)} ms`
  );
}
