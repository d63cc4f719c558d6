import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { WorkerStatus } from '@temporalio/worker';
import { listenHttp } from '../metrics/server.ts';

/**
 * The worker's health endpoint, for a container's health check or an orchestrator's probe: `GET /health` answers
 * 200 only while the worker runs, both its pollers poll, and Temporal answers a health check on the worker's own
 * connection within 2 s; otherwise 503, saying which part failed. A worker whose server is gone keeps "polling"
 * (the SDK retries its polls without end), so the status alone would call a worker that can do nothing healthy.
 */

export interface WorkerHealthSources {
  /** The SDK worker's status (`worker.getStatus()`). */
  status(): Pick<WorkerStatus, 'runState' | 'workflowPollerState' | 'activityPollerState'>;
  /** Resolves when Temporal answers on the worker's connection; rejects otherwise. */
  pingTemporal(): Promise<void>;
  /** How long Temporal has to answer before it counts as down (2 s by default). */
  pingTimeoutMs?: number;
}

const DEFAULT_PING_TIMEOUT_MS = 2_000;

/**
 * `ping`, or a rejection once `ms` have passed. The SDK's own deadline is not enough: while its connection to a
 * server that is gone reconnects, a call can wait well past it, and a health check must answer in time.
 */
async function within(ms: number, ping: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  ping.catch(() => undefined); // a late failure after the time-out is no unhandled rejection
  try {
    await Promise.race([ping, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface WorkerHealth {
  healthy: boolean;
  worker: string;
  workflowPoller: string;
  activityPoller: string;
  temporal: 'up' | 'down';
}

export async function checkWorkerHealth(sources: WorkerHealthSources): Promise<WorkerHealth> {
  const status = sources.status();
  const temporal = await within(
    sources.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS,
    sources.pingTemporal(),
  ).then(
    () => 'up' as const,
    () => 'down' as const,
  );
  return {
    healthy:
      status.runState === 'RUNNING' &&
      status.workflowPollerState === 'POLLING' &&
      status.activityPollerState === 'POLLING' &&
      temporal === 'up',
    worker: status.runState,
    workflowPoller: status.workflowPollerState,
    activityPoller: status.activityPollerState,
    temporal,
  };
}

export interface RunningHealthServer {
  /** `http://host:port/health`, with the port actually bound. */
  url: string;
  stop(): Promise<void>;
}

/** Serves `GET /health` (and HEAD) from `check`; any other method is 405, any other path 404. */
export async function startWorkerHealthServer(options: {
  host: string;
  port: number;
  check: () => Promise<WorkerHealth>;
}): Promise<RunningHealthServer> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const plain = (status: number, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
      res.end(text);
    };
    if ((req.url ?? '/').split('?')[0] !== '/health') return plain(404, 'Not found: health is at /health\n');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return plain(405, 'Method not allowed\n', { allow: 'GET, HEAD' });
    const health = await options.check().catch((): WorkerHealth => ({
      healthy: false,
      worker: 'unknown',
      workflowPoller: 'unknown',
      activityPoller: 'unknown',
      temporal: 'down',
    }));
    const { healthy, ...parts } = health;
    const body = `${JSON.stringify({ status: healthy ? 'ok' : 'unavailable', ...parts })}\n`;
    res.writeHead(healthy ? 200 : 503, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const server = createServer((req, res) => void handle(req, res));
  const { origin } = await listenHttp(server, options.host, options.port);
  return {
    url: `${origin}/health`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
