import { isGrpcDeadlineError, isGrpcServiceError } from '@temporalio/client';
import { AppError } from '../errors.ts';

/**
 * Failures that mean a dependency (PostgreSQL, the Temporal server, an outside HTTP service) cannot be reached or
 * keep up right now, as opposed to a bug: the API answers them 503 `service_unavailable` with Retry-After, never
 * 500, so a client (or Meta, for the WhatsApp webhook) tries again. The process itself recovers on its own: the pool
 * drops dead connections and opens new ones, the Temporal client reconnects.
 */

/** Socket errors of a connection that is refused, cut or silent. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTCONN',
  'EHOSTUNREACH',
]);

/**
 * PostgreSQL SQLSTATEs of a server going away or not there yet: class 08 (connection exception), 57P01
 * admin_shutdown ("terminating connection due to administrator command"), 57P02 crash_shutdown, 57P03
 * cannot_connect_now ("the database system is starting up / shutting down"), 53300 too_many_connections.
 */
const POSTGRES_CODES = /^(08...|57P0[123]|53300)$/;

/** What node-postgres and knex say when a connection dies under a query or none can be had. */
const CONNECTION_MESSAGES =
  /Connection terminated|terminating connection|Client has encountered a connection error|Timeout acquiring a connection|Connection refused/i;

/**
 * gRPC codes of a Temporal frontend that cannot take the call now: 14 UNAVAILABLE (out of reach) and 8
 * RESOURCE_EXHAUSTED (its rate limits or a busy history shard under load). DEADLINE_EXCEEDED is matched apart.
 */
const GRPC_BUSY = new Set([8, 14]);

/**
 * undici's codes of an outside HTTP service that did not answer in time (connect, headers or body), and
 * Node's own name for an `AbortSignal.timeout` firing.
 */
const HTTP_TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e && chain.length < 8 && !chain.includes(e); e = (e as { cause?: unknown }).cause)
    chain.push(e);
  return chain;
}

function isTemporalDown(e: unknown): boolean {
  if (isGrpcServiceError(e)) return GRPC_BUSY.has(Number(e.code)) || isGrpcDeadlineError(e);
  return false;
}

function isOutsideServiceSlow(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return (typeof code === 'string' && HTTP_TIMEOUT_CODES.has(code)) || e.name === 'TimeoutError';
}

/**
 * SQLSTATEs of a statement PostgreSQL gave up on because of other transactions under load, not because of this
 * request: 40P01 deadlock_detected, 40001 serialization_failure, 55P03 lock_not_available. The transaction was
 * rolled back whole, so asking again is safe.
 */
const POSTGRES_CONTENTION = /^(40P01|40001|55P03)$/;

function isDatabaseContended(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && POSTGRES_CONTENTION.test(code);
}

function isDatabaseDown(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || POSTGRES_CODES.test(code))) return true;
  if (e.name === 'KnexTimeoutError') return true;
  // An AggregateError (a refused connection to each address of a host) carries the codes in its members.
  if (e instanceof AggregateError && e.errors.some(isDatabaseDown)) return true;
  return CONNECTION_MESSAGES.test(e.message);
}

/** The 503 to answer when `err` means a dependency is down, or undefined when it is something else. */
export function dependencyUnavailable(err: unknown): AppError | undefined {
  const chain = causes(err);
  if (chain.some(isTemporalDown))
    return new AppError(
      'service_unavailable',
      'The approval service is unavailable; try again shortly',
      {},
      {
        'Retry-After': '5',
      },
    );
  if (chain.some(isDatabaseDown))
    return new AppError(
      'service_unavailable',
      'The database is unavailable; try again shortly',
      {},
      {
        'Retry-After': '5',
      },
    );
  if (chain.some(isDatabaseContended))
    return new AppError(
      'service_unavailable',
      'The database is busy with other requests; try again shortly',
      {},
      { 'Retry-After': '1' },
    );
  if (chain.some(isOutsideServiceSlow))
    return new AppError(
      'service_unavailable',
      'A service this request depends on did not answer in time; try again shortly',
      {},
      { 'Retry-After': '5' },
    );
  return undefined;
}
