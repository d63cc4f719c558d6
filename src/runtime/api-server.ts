import { createServer, type Server } from 'node:http';
import { createApp } from '../api/app.ts';
import { answerClientError } from '../api/client-error.ts';
import type { ApiDeps } from '../api/deps.ts';

export interface RunningApi {
  server: Server;
  url: string;
  stop(): Promise<void>;
}

export async function startApiServer(deps: ApiDeps, host: string, port: number): Promise<RunningApi> {
  const app = createApp(deps);
  const handle = app.callback();
  const server = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    server,
    url: `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${actualPort}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
