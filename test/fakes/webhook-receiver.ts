import { EventEmitter } from 'node:events';
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type VerifyResult } from '../../src/features/webhooks/signature.ts';

/**
 * A customer's webhook endpoint, as a real HTTP server on 127.0.0.1. It reads each request the way
 * docs/webhooks.md tells customers to (the raw bytes, collected from the request stream, never parsed and
 * re-serialised) and verifies it with the documented recipe, then answers as scripted.
 */

export type ReceiverStep =
  /** Answer with this status (and optional headers and body). */
  | { status: number; headers?: Record<string, string>; body?: string }
  /** Never answer: for time-out tests. The request is held until the client gives up or the receiver closes. */
  | { hang: true };

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  receivedAt: Date;
  /** The verification with the receiver's secret at the time; undefined when it has no secret. */
  verification?: VerifyResult;
  /** What the receiver did: the status it answered, or 'hang'. */
  answer: number | 'hang';
}

export interface WebhookReceiverOptions {
  secret?: string;
  /** Answers for the next requests, in order; when exhausted, `fallback` (default 200) answers. */
  steps?: ReceiverStep[];
  /**
   * Answers chosen by what arrived (e.g. refuse one event, accept the rest), asked before `steps`: a step, or
   * undefined to go on to `steps` and `fallback`.
   */
  respond?: (request: { headers: IncomingHttpHeaders; rawBody: Buffer }) => ReceiverStep | undefined;
  fallback?: ReceiverStep;
  /** Answer 401 to requests that fail verification, as a careful customer would (default: answer as scripted). */
  refuseUnverified?: boolean;
  /** The path of `url` (default `/hooks/wathiq`). The server answers on every path and records it. */
  path?: string;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:<port><path> */
  url: string;
  port: number;
  /** Every request received, in order, on any path. */
  readonly requests: ReceivedRequest[];
  /** Queues answers for the next requests. */
  respondWith(...steps: ReceiverStep[]): void;
  setSecret(secret: string | undefined): void;
  /** Resolves once `count` requests have arrived (fails after `timeoutMs`, so a broken test cannot hang). */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const steps = [...(options.steps ?? [])];
  const fallback = options.fallback ?? { status: 200 };
  let secret = options.secret;
  const requests: ReceivedRequest[] = [];
  const arrivals = new EventEmitter();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const verification =
        secret === undefined ? undefined : verifyWebhook({ secret, headers: req.headers, rawBody });
      let step = options.respond?.({ headers: req.headers, rawBody }) ?? steps.shift() ?? fallback;
      if (options.refuseUnverified && verification && !verification.ok) step = { status: 401 };
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody,
        receivedAt: new Date(),
        verification,
        answer: 'hang' in step ? 'hang' : step.status,
      });
      arrivals.emit('request');
      if (!('hang' in step)) answer(res, step);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${options.path ?? '/hooks/wathiq'}`,
    port,
    requests,
    respondWith: (...more) => void steps.push(...more),
    setSecret: (s) => void (secret = s),
    waitForRequests(count, timeoutMs = 10_000) {
      if (requests.length >= count) return Promise.resolve(requests.slice(0, count));
      return new Promise((resolve, reject) => {
        const onRequest = () => {
          if (requests.length < count) return;
          clearTimeout(timer);
          arrivals.off('request', onRequest);
          resolve(requests.slice(0, count));
        };
        const timer = setTimeout(() => {
          arrivals.off('request', onRequest);
          reject(
            new Error(`webhook receiver: ${requests.length} of ${count} requests after ${timeoutMs} ms`),
          );
        }, timeoutMs);
        arrivals.on('request', onRequest);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // releases hanging requests
        server.close(() => resolve());
      }),
  };
}

function answer(
  res: ServerResponse,
  step: { status: number; headers?: Record<string, string>; body?: string },
) {
  res.writeHead(step.status, { 'content-type': 'text/plain', ...step.headers });
  res.end(step.body ?? '');
}
