/**
 * bench:lifecycle's `GET /documents/{id}` target, measured right after the lifecycle load on the same service: the
 * documents the run created, read at random by `connections` concurrent clients through the API (authentication,
 * its key cache, the rate limiter and all), right after the naive handler (bench/naive-server.ts) read the same way
 * in the same run.
 */
import os from 'node:os';
import type { Db } from '../src/db/knex.ts';
import { issueApiKey } from '../src/features/accounts/api-keys.ts';
import { startNaiveServer } from './naive-server.ts';
import { driveReads, keysPerAccount, type ReadAccount, type ReadResult } from './read-load.ts';
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
  /** The documents the run created, by account. */
  documents: { accountId: string; ids: string[] }[];
  requests: number;
  connections: number;
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
  const naive = await startNaiveServer(input.databaseUrl, input.poolMax);
  // The naive handler runs in this process, the API in its own and the driver in a third: each server's CPU time
  // is its process's.
  const ownCoreSeconds = () => {
    const { user, system } = process.cpuUsage();
    return Promise.resolve((user + system) / 1e6);
  };
  const measure = async (
    base: string,
    serverCoreSeconds: () => Promise<number>,
  ): Promise<ReadResult & { cpuMsPerRequest: number }> => {
    await driveReads({ base, accounts, requests: warmUp, connections: input.connections });
    const cpu = await serverCoreSeconds();
    const result = await driveReads({
      base,
      accounts,
      requests: input.requests,
      connections: input.connections,
    });
    return { ...result, cpuMsPerRequest: (((await serverCoreSeconds()) - cpu) * 1000) / input.requests };
  };
  try {
    const baseline = await measure(naive.url, ownCoreSeconds);
    const api = await measure(input.apiBase, input.apiCoreSeconds);
    return documentReadLines({
      documents: accounts.reduce((n, a) => n + a.ids.length, 0),
      accounts: accounts.length,
      connections: input.connections,
      loadAverage: os.loadavg()[0]!,
      naive: baseline,
      api,
    });
  } finally {
    await naive.close();
  }
}
