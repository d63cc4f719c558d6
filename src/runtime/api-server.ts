import { createServer, type Server } from 'node:http';
import { createApiKeyCache } from '../features/accounts/api-key-cache.ts';
import { startApprovalSignalRelay } from '../features/approval/approval-signal-relay.ts';
import { createApprovalClient } from '../features/approval/client.ts';
import { createWriteNotices } from '../features/approval/write-notices.ts';
import { createApp } from '../api/app.ts';
import { answerClientError } from '../api/client-error.ts';
import { pageAssetsFor } from '../http/precompressed.ts';
import { startPurgeSchedule } from './purge.ts';

export interface RunningApi {
  server: Server;
  url: string;
  stop(): Promise<void>;
}

/**
 * Listens with the app built from `deps`, and runs the purge of stale rows (purge.ts) and the relay of approval
 * signals (approval-signal-relay.ts) on their timers while the server runs (every API process does).
 */
export async function startApiServer(
  deps: Parameters<typeof createApp>[0],
  host: string,
  port: number,
): Promise<RunningApi> {
  // Keys this process authenticated, dropped the moment PostgreSQL announces a change to one (any process's).
  const apiKeys =
    deps.apiKeys ??
    (await createApiKeyCache({ db: deps.db, logger: deps.logger, ttlMs: deps.config.apiKeyCacheTtlMs }));
  // The workflow's writes an answer waits for, as PostgreSQL announces them: answered the moment they commit.
  const writeNotices = deps.writeNotices ?? (await createWriteNotices({ db: deps.db, logger: deps.logger }));
  const pageAssets = deps.pageAssets ?? pageAssetsFor(deps.config, deps.logger);
  const app = createApp({ ...deps, apiKeys, writeNotices, pageAssets });
  const handle = app.callback();
  const server = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const purge = startPurgeSchedule(deps);
  // Actions this or another API process recorded and never signalled (a crash between commit and signal).
  const relay = startApprovalSignalRelay({
    db: deps.db,
    logger: deps.logger,
    approvals: createApprovalClient({
      client: deps.temporal.client,
      taskQueue: deps.config.temporal.taskQueue,
      answerTimeoutMs: deps.config.approvalAnswerTimeoutMs,
    }),
  });
  // The public pages' compressed forms that the build did not leave (npm start runs the sources) are made now, in
  // the background and once each, so the first approver does not wait for them.
  pageAssets
    .warm()
    .catch((err: unknown) => deps.logger.warn({ err }, 'page assets: compressing at start-up failed'));
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    server,
    url: `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${actualPort}`,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await purge.stop();
      await relay.stop();
      if (!deps.apiKeys) await apiKeys.close();
      if (!deps.writeNotices) await writeNotices.close();
    },
  };
}
