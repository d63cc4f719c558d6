import type { RecordAttemptInput } from './webhook-deliveries-store.ts';
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher, request } from 'undici';
import { clientSpan, recordHttpOutcome, serverAttributes } from '../../tracing/spans.ts';
import type { WebhookEvent } from './events.ts';
import { signStandardWebhook, signWebhook } from './signature.ts';
import { guardedLookup } from './guarded-lookup.ts';
import { forbiddenAddressReason, hostOf, systemResolveHost, type ResolveHost } from './ssrf-guard.ts';
import { isIP } from 'node:net';

export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;
export const USER_AGENT = 'Wathiq-Webhooks/1';
/** How much of a failing receiver's answer is kept, for logs only. */
export const RESPONSE_EXCERPT_BYTES = 256;

/**
 * Why an attempt failed, as the API reports it: `http_status` (with the status code), `timeout`,
 * `connection_refused` (nothing listens there), `connection_failed` (the connection broke before an answer),
 * `dns`, `tls`, and `blocked_address` (the SSRF guard refused the URL or the address it resolves to).
 */
export const DELIVERY_ERROR_CLASSES = [
  'http_status',
  'timeout',
  'connection_refused',
  'connection_failed',
  'dns',
  'tls',
  'blocked_address',
] as const;
export type DeliveryErrorClass = (typeof DELIVERY_ERROR_CLASSES)[number];

/**
 * What one attempt did, to be persisted as a webhook_delivery_attempts row before anyone decides to retry.
 * `errorMessage` is ours and fixed per class: never the receiver's body, never a socket error (those name
 * addresses and ports, and would let a caller map the network behind Wathiq). `detail` (the raw error) and
 * `responseExcerpt` (the start of a failing receiver's body) are for logs only: never return or store them.
 */
export interface DeliveryResult {
  ok: boolean;
  status?: number;
  ms: number;
  startedAt: Date;
  /** The X-Wathiq-Timestamp this attempt carried. */
  timestamp: number;
  errorClass?: DeliveryErrorClass;
  errorMessage?: string;
  /** The underlying error, for the log only. */
  detail?: string;
  /** From Retry-After on a 429 or 503 (seconds or HTTP date), in ms from the answer. */
  retryAfterMs?: number;
  /** The receiver answered 410 Gone: the webhook should be disabled. */
  gone?: boolean;
  responseExcerpt?: string;
}

/**
 * The row an attempt leaves in the delivery's history: what the receiver did, in our words (`detail`, which may
 * name addresses, stays in the log). No next attempt is planned by the record itself.
 */
export function attemptRecord(
  deliveryId: number,
  attemptNumber: number,
  result: DeliveryResult,
): RecordAttemptInput {
  return {
    deliveryId,
    attemptNumber,
    startedAt: result.startedAt,
    statusCode: result.status,
    durationMs: result.ms,
    errorClass: result.errorClass,
    errorMessage: result.errorMessage,
    nextAttemptAt: null,
  };
}

export interface DeliverOnceInput {
  url: string;
  event: WebhookEvent;
  /** The same value on every attempt of a delivery (X-Wathiq-Delivery). */
  deliveryId: number;
  /** The stored body, sent byte for byte; never re-serialised. */
  body: string;
  secret: string;
  timeoutMs?: number;
  /** WEBHOOK_ALLOW_PRIVATE: permits loopback and private receivers (development and tests). */
  allowPrivate?: boolean;
  /** Resolver used for the connection itself; default: the system resolver, every address. */
  lookup?: ResolveHost;
  now?: () => Date;
}

/**
 * One HTTP attempt of one delivery. Never throws: every outcome is a DeliveryResult. Redirects are not followed.
 * The SSRF guard runs inside the connection's own DNS lookup, so the address judged is the address connected to.
 */
export function deliverOnce(input: DeliverOnceInput): Promise<DeliveryResult> {
  // One CLIENT span per attempt: the receiver's host, the event and the outcome; never the URL's path or query
  // (a customer may put a secret there), and no trace context in the request (our trace ids are not theirs).
  const attributes = {
    'http.request.method': 'POST',
    'wathiq.webhook.event': input.event,
    'wathiq.webhook.delivery_id': input.deliveryId,
    ...(URL.canParse(input.url) ? serverAttributes(input.url) : {}),
  };
  return clientSpan('POST webhook', attributes, async (span) => {
    const result = await attempt(input);
    recordHttpOutcome(span, { status: result.status, errorType: result.errorClass });
    return result;
  });
}

/** The attempt's timing, taken when its result is made. */
type Timing = () => { ms: number; startedAt: Date; timestamp: number };

async function attempt(input: DeliverOnceInput): Promise<DeliveryResult> {
  const now = input.now ?? (() => new Date());
  const timeoutMs = input.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const allowPrivate = input.allowPrivate ?? false;
  const startedAt = now();
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const t0 = performance.now();
  const base: Timing = () => ({ ms: Math.round(performance.now() - t0), startedAt, timestamp });
  const failed = (errorClass: DeliveryErrorClass, errorMessage: string, detail?: string): DeliveryResult => ({
    ok: false,
    ...base(),
    errorClass,
    errorMessage,
    ...(detail !== undefined && { detail }),
  });

  const url = checkedUrl(input.url, allowPrivate);
  if (!(url instanceof URL)) return failed('blocked_address', url.message, url.detail);

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DeliveryTimeoutError(timeoutMs)), timeoutMs);
  const agent = new Agent({
    connect: { lookup: guardedLookup(input.lookup ?? systemResolveHost, allowPrivate), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connections: 1,
  });
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      signal: controller.signal,
      headers: deliveryHeaders(input, timestamp),
      body: input.body,
    });
    return await answerResult(res, base, now);
  } catch (err) {
    const detail = describeError(err);
    if (controller.signal.aborted) return failed('timeout', `No answer within ${timeoutMs} ms`, detail);
    const errorClass = classifyError(err);
    return failed(errorClass, publicMessage(err, errorClass, timeoutMs), detail);
  } finally {
    clearTimeout(timer);
    await agent.destroy().catch(() => undefined);
  }
}

/**
 * The URL to call, or why it is refused: not a URL, not http(s), carrying credentials, or a literal address the
 * SSRF guard forbids (a literal address skips DNS, so the connection's lookup never sees it: it is judged here).
 */
function checkedUrl(raw: string, allowPrivate: boolean): URL | { message: string; detail?: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { message: 'The webhook URL is not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { message: `The scheme ${url.protocol} is not allowed; only http and https are` };
  }
  if (url.username !== '' || url.password !== '') {
    return { message: 'The webhook URL carries credentials, which are not allowed' };
  }
  const host = hostOf(url);
  if (!allowPrivate && isIP(host) !== 0) {
    const reason = forbiddenAddressReason(host);
    if (reason) return { message: BLOCKED_ADDRESS, detail: `${host}: ${reason}` };
  }
  return url;
}

function deliveryHeaders(input: DeliverOnceInput, timestamp: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-wathiq-event': input.event,
    'x-wathiq-timestamp': String(timestamp),
    'x-wathiq-signature': signWebhook({ secret: input.secret, timestamp, body: input.body }),
    'x-wathiq-delivery': String(input.deliveryId),
    // Standard Webhooks: the id is the delivery's (as in the body and X-Wathiq-Delivery), so it is the same
    // on every attempt and receivers can deduplicate on either.
    'webhook-id': String(input.deliveryId),
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook({
      secret: input.secret,
      id: String(input.deliveryId),
      timestamp,
      body: input.body,
    }),
  };
}

/** What the receiver's answer means: delivered (2xx), a redirect not followed, gone (410), or a refusal. */
async function answerResult(
  res: Dispatcher.ResponseData,
  base: Timing,
  now: () => Date,
): Promise<DeliveryResult> {
  const status = res.statusCode;
  if (status >= 200 && status < 300) {
    await res.body.dump({ limit: 0 }).catch(() => undefined);
    return { ok: true, status, ...base() };
  }
  const excerpt = await readExcerpt(res.body);
  const result: DeliveryResult = { ok: false, status, ...base(), errorClass: 'http_status' };
  if (excerpt) result.responseExcerpt = excerpt;
  if (status >= 300 && status < 400) {
    const location = firstHeader(res.headers.location);
    if (location) result.detail = `Location: ${truncate(location, 200)}`;
    result.errorMessage = `Receiver answered ${status}; redirects are not followed, point the webhook at the final URL`;
  } else if (status === 410) {
    result.gone = true;
    result.errorMessage = 'Receiver answered 410 Gone';
  } else {
    result.errorMessage = `Receiver answered ${status}`;
    if (status === 429 || status === 503) {
      const retryAfterMs = parseRetryAfter(firstHeader(res.headers['retry-after']), now());
      if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
    }
  }
  return result;
}

class DeliveryTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`No answer within ${timeoutMs} ms`);
    this.name = 'DeliveryTimeoutError';
  }
}

const DNS_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
  'ENODATA',
  'ESERVFAIL',
  'ENONAME',
  'EREFUSED',
]);
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

const BLOCKED_ADDRESS =
  'The webhook URL leads to an address that is not public (loopback, private, link-local or reserved); webhooks reach public addresses only';

/** What the API says of a TLS failure, by OpenSSL's or Node's code; never the certificate's names or the address. */
const UNTRUSTED =
  'TLS: the receiver’s certificate is not issued by a trusted authority (or its intermediate certificate is missing)';
const TLS_MESSAGES = new Map<string, string>([
  ['DEPTH_ZERO_SELF_SIGNED_CERT', 'TLS: the receiver’s certificate is self-signed'],
  ['SELF_SIGNED_CERT_IN_CHAIN', 'TLS: the receiver’s certificate chain ends in a self-signed certificate'],
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', UNTRUSTED],
  ['UNABLE_TO_GET_ISSUER_CERT', UNTRUSTED],
  ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', UNTRUSTED],
  ['CERT_HAS_EXPIRED', 'TLS: the receiver’s certificate has expired'],
  ['CERT_NOT_YET_VALID', 'TLS: the receiver’s certificate is not valid yet'],
  ['ERR_TLS_CERT_ALTNAME_INVALID', 'TLS: the receiver’s certificate is not for the webhook URL’s host'],
]);

function errorChain(err: unknown): { name?: string; code?: string; syscall?: string }[] {
  const chain: { name?: string; code?: string; syscall?: string }[] = [];
  let cur: unknown = err;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const e = cur as { name?: unknown; code?: unknown; syscall?: unknown; cause?: unknown };
    chain.push({
      name: typeof e.name === 'string' ? e.name : undefined,
      code: typeof e.code === 'string' ? e.code : undefined,
      syscall: typeof e.syscall === 'string' ? e.syscall : undefined,
    });
    cur = e.cause;
  }
  return chain;
}

const isTlsCode = (code: string) => /CERT|TLS|SSL|EPROTO/.test(code);

export function classifyError(err: unknown): DeliveryErrorClass {
  const chain = errorChain(err);
  const any = (test: (e: (typeof chain)[number]) => boolean) => chain.some(test);
  if (any((e) => e.code === 'WATHIQ_FORBIDDEN_ADDRESS')) return 'blocked_address';
  if (any((e) => e.name === 'TimeoutError' || (e.code !== undefined && TIMEOUT_CODES.has(e.code)))) {
    return 'timeout';
  }
  if (any((e) => (e.code !== undefined && DNS_CODES.has(e.code)) || e.syscall === 'getaddrinfo'))
    return 'dns';
  if (any((e) => e.code !== undefined && isTlsCode(e.code))) return 'tls';
  if (any((e) => e.code === 'ECONNREFUSED')) return 'connection_refused';
  return 'connection_failed';
}

/** The fixed sentence the API shows for a failure without an HTTP answer. */
function publicMessage(err: unknown, errorClass: DeliveryErrorClass, timeoutMs: number): string {
  switch (errorClass) {
    case 'timeout':
      return `No answer within ${timeoutMs} ms`;
    case 'blocked_address':
      return BLOCKED_ADDRESS;
    case 'dns':
      return 'The webhook URL’s host name did not resolve';
    case 'connection_refused':
      return 'The receiver refused the connection (nothing accepts connections on that port)';
    case 'tls': {
      for (const { code } of errorChain(err)) {
        const known = code === undefined ? undefined : TLS_MESSAGES.get(code);
        if (known) return known;
      }
      return 'TLS: the handshake with the receiver failed';
    }
    default:
      return 'The connection to the receiver failed before it answered';
  }
}

/** The error as Node or undici put it, with its code: for the log only (it names addresses and ports). */
function describeError(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(err);
  const code = typeof e.code === 'string' && !message.includes(e.code) ? `${e.code}: ` : '';
  return truncate(`${code}${message}`, 300);
}

/** Retry-After as delta-seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  // IMF-fixdate / RFC 850 ("Sun, 06 Nov 1994 ...", "Sunday, 06-Nov-94 ...") and asctime ("Sun Nov  6 ...").
  if (!/^[A-Za-z]{3,9},? /.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readExcerpt(
  body: AsyncIterable<unknown> & { destroy(): unknown },
): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      chunks.push(buf);
      size += buf.length;
      if (size >= RESPONSE_EXCERPT_BYTES) break;
    }
  } catch {
    // The status is what counts; a body that breaks off or times out adds nothing.
  } finally {
    body.destroy();
  }
  const text = Buffer.concat(chunks)
    .subarray(0, RESPONSE_EXCERPT_BYTES)
    .toString('utf8')
    // eslint-disable-next-line no-control-regex -- control characters are exactly what a log line must not carry
    .replace(/[\u0000-\u001f\u007f\ufffd]+/g, ' ')
    .trim();
  return text === '' ? undefined : text;
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
