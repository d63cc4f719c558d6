/**
 * bench:lifecycle's `GET /documents/{id}` target, measured right after the lifecycle load on the same service: the
 * documents the run created, read at random by `connections` concurrent clients through the API (authentication,
 * its key cache, the rate limiter and all), right after the naive handler (bench/naive-server.ts) read the same way
 * in the same run.
 */
import os from 'node:os';
import type { Db } from '../src/db/knex.ts';
import { issueApiKey } from '../src/features/accounts/api-keys.ts';
import type { GcTrace } from './gc-trace.ts';
import { startNaiveServer } from './naive-server.ts';
import {
  floorLine,
  observePhase,
  phaseLine,
  profiled,
  quietLine,
  waitForQuiet,
  type PhaseFigures,
  type ProcessCpu,
} from './read-phase-probe.ts';
import { driveReads, keysPerAccount, type ReadAccount, type ReadResult } from './read-load.ts';
import { readTail, tailLine, type TailFigures } from './read-tail.ts';
import { documentReadLines } from './user-targets.ts';

export interface DocumentReadsInput {
  db: Db;
  databaseUrl: string;
  /** PostgreSQL connections of the naive handler: the API's own pool size, so both may wait on as many. */
  poolMax: number;
  /** The API's `…/api/v1`. */
  apiBase: string;
  /** Core-seconds the API's process has used so far (it runs in a process of its own). */
  apiCoreSeconds: () => Promise<number>;
  /** The API process's GC pauses (its `--trace-gc` lines), when it was started to print them. */
  apiGc?: GcTrace;
  /** The documents the run created, by account. */
  documents: { accountId: string; ids: string[] }[];
  requests: number;
  connections: number;
  /** The service's other processes (worker, Temporal, PostgreSQL): waited on until quiet, and watched meanwhile. */
  others: ProcessCpu;
}

/** Each measured run is preceded by a warm-up of this share of its requests (connections opened, code warm). */
const WARM_UP_SHARE = 0.1;

export async function documentReads(input: DocumentReadsInput): Promise<string[]> {
  const warmUp = Math.ceil(input.requests * WARM_UP_SHARE);
  // Keys of their own, read-only, enough that no key reaches its plan's limit on the API's warm-up and run.
  const keys = keysPerAccount(warmUp + input.requests, input.documents.length);
  const accounts: ReadAccount[] = [];
  for (const { accountId, ids } of input.documents) {
    const authorizations: string[] = [];
    for (let k = 0; k < keys; k++) {
      const { apiKey, secret } = await issueApiKey(input.db, {
        accountId,
        name: `bench reads ${k + 1}`,
        scopes: ['documents:read'],
        maxActive: Number.MAX_SAFE_INTEGER,
      });
      authorizations.push(`Bearer ${apiKey.key}:${secret}`);
    }
    accounts.push({ ids, authorizations });
  }
  const quiet = await waitForQuiet(input.others);
  const naive = await startNaiveServer(input.databaseUrl, input.poolMax);
  // The naive handler runs in this process, the API in its own and the driver in a third: each server's CPU time
  // is its process's.
  const ownCoreSeconds = () => {
    const { user, system } = process.cpuUsage();
    return Promise.resolve((user + system) / 1e6);
  };
  const measure = async (
    name: string,
    base: string,
    serverCoreSeconds: () => Promise<number>,
  ): Promise<ReadResult & { cpuMsPerRequest: number; phase: PhaseFigures; tail?: TailFigures }> => {
    await driveReads({ base, accounts, requests: warmUp, connections: input.connections });
    const cpu = await serverCoreSeconds();
    const inProcess = serverCoreSeconds === ownCoreSeconds;
    const stop = await observePhase(
      input.others,
      serverCoreSeconds,
      inProcess,
      inProcess ? undefined : input.apiGc,
    );
    const phaseAt = performance.now();
    const run = () =>
      driveReads({ base, accounts, requests: input.requests, connections: input.connections });
    // Only a server in this process can be profiled from here; the API's own process is profiled whole.
    const result = await (inProcess ? profiled(`reads-${name}`, run) : run());
    const phase = await stop(result.driverCpuSeconds, result.requests);
    // The API's pauses as its --trace-gc lines were read here: each line within a moment of the pause's end.
    const serverGc = inProcess
      ? undefined
      : input.apiGc?.since(phaseAt).map((p) => {
          const end = performance.timeOrigin + p.at;
          return { start: end - p.ms, end };
        });
    return {
      ...result,
      tail: serverGc && readTail(result.startedAt, result.latencies, serverGc, result.driverGc),
      cpuMsPerRequest: (((await serverCoreSeconds()) - cpu) * 1000) / input.requests,
      phase,
    };
  };
  try {
    const baseline = await measure('naive', naive.url, ownCoreSeconds);
    const api = await measure('api', input.apiBase, input.apiCoreSeconds);
    const lines = documentReadLines({
      documents: accounts.reduce((n, a) => n + a.ids.length, 0),
      accounts: accounts.length,
      connections: input.connections,
      loadAverage: os.loadavg()[0]!,
      naive: baseline,
      api,
    });
    return [
      lines[0]!,
      quietLine(quiet),
      lines[1]!,
      phaseLine(baseline.phase),
      floorLine(baseline.phase, input.connections, baseline.rps),
      lines[2]!,
      phaseLine(api.phase),
      ...(api.tail ? [tailLine(api.tail)] : []),
      floorLine(api.phase, input.connections, api.rps),
    ];
  } finally {
    await naive.close();
  }
}
