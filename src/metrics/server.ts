import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

/** Text in Prometheus exposition format from elsewhere in the process, appended to the registry's. */
export type MetricsSource = () => Promise<string>;

export interface MetricsServerOptions {
  registry: Registry;
  host: string;
  port: number;
  /** Appended after the registry's metrics (the Temporal SDK's exporter); a failing source is left out. */
  sources?: readonly MetricsSource[];
  onSourceError?: (err: unknown) => void;
}

export interface RunningMetricsServer {
  /** `http://host:port/metrics`, with the port actually bound. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * The Prometheus endpoint: its own small HTTP server on its own port (never the API's app, so it has neither the
 * API's middleware nor its exposure). `GET /metrics` (and HEAD) answer the exposition format; any other method on
 * it is 405, any other path 404.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<RunningMetricsServer> {
  const { registry } = options;
  const sources = options.sources ?? [];

  const scrape = async (): Promise<string> => {
    const parts = [await registry.metrics()];
    for (const text of await Promise.all(
      sources.map((source) =>
        source().catch((err: unknown) => {
          options.onSourceError?.(err);
          return '';
        }),
      ),
    )) {
      if (text.trim() !== '') parts.push(text);
    }
    return parts.map((p) => (p.endsWith('\n') ? p : `${p}\n`)).join('');
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const plain = (status: number, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
      res.end(text);
    };
    if (path !== '/metrics') return plain(404, 'Not found: metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return plain(405, 'Method not allowed\n', { allow: 'GET, HEAD' });
    }
    try {
      const body = await scrape();
      res.writeHead(200, {
        'content-type': registry.contentType,
        'cache-control': 'no-store',
        'content-length': String(Buffer.byteLength(body)),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      if (!res.headersSent) plain(500, 'Metrics could not be collected\n');
      else res.destroy();
    }
  };

  const server = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 65_000;
  const { port, origin } = await listenHttp(server, options.host, options.port);
  return {
    url: `${origin}/metrics`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/**
 * Listens on `host`:`port` (0: any free port); resolves with the port bound and the origin that reaches it
 * (`localhost` for a wildcard address).
 */
export async function listenHttp(
  server: Server,
  host: string,
  port: number,
): Promise<{ port: number; origin: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return { port: bound, origin: `http://${name.includes(':') ? `[${name}]` : name}:${bound}` };
}

/**
 * A source that reads another exporter in this process (the Temporal SDK's, bound to loopback) over HTTP, within
 * `timeoutMs`.
 */
export function httpMetricsSource(url: string, timeoutMs: number): MetricsSource {
  return async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    return res.text();
  };
}
