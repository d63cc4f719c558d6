import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A door in front of the fake Graph API, for fault tests that kill the worker: while open it forwards every request
 * and its answer; closed, it holds new requests without forwarding them, so "Meta" has not received them. Killing
 * the worker while closed, once nothing forwarded is still awaiting its answer and every answer the worker got is
 * recorded, kills it outside any provider call: the only moment at which a kill may duplicate a message (the
 * worker cannot know whether Meta took it; see whatsapp/send-notice.ts). Held requests are dropped, never
 * forwarded: their retries are Meta's first sight of them.
 */
export interface GraphGate {
  /** Point WHATSAPP_API_URL here (same version path as the upstream's). */
  apiUrl: string;
  close(): void;
  /** Requests forwarded and not yet answered to the worker. */
  inFlight(): number;
  /** Requests held since the door closed. */
  held(): number;
  /** Drops the held requests (never forwarded) and opens again. */
  dropHeldAndOpen(): void;
  stop(): Promise<void>;
}

export async function startGraphGate(upstreamApiUrl: string): Promise<GraphGate> {
  const upstream = new URL(upstreamApiUrl);
  let open = true;
  let inFlight = 0;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!open) return void held.push(res);
      inFlight += 1;
      void fetch(`${upstream.origin}${req.url ?? '/'}`, {
        method: req.method ?? 'POST',
        headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
        body: Buffer.concat(chunks),
      })
        .then(async (answer) => {
          const body = Buffer.from(await answer.arrayBuffer());
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' });
          res.end(body);
        })
        .catch(() => res.destroy())
        .finally(() => (inFlight -= 1));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
    close: () => void (open = false),
    inFlight: () => inFlight,
    held: () => held.length,
    dropHeldAndOpen() {
      for (const res of held.splice(0)) res.destroy();
      open = true;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
