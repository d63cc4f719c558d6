import { ServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { dependencyUnavailable } from '../../src/http/unavailable.ts';

/** What the error middleware answers 503 instead of 500: a dependency out of reach, and nothing else. */

function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
}
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('dependencyUnavailable', () => {
  it.each([
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ],
    ['a fast shutdown (57P01)', pgError('57P01', 'terminating connection due to administrator command')],
    ['a server starting up (57P03)', pgError('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', pgError('08006', 'connection failure')],
    ['a connection cut under a query', new Error('Connection terminated unexpectedly')],
    [
      'an exhausted pool',
      Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' }),
    ],
    [
      'refused on every address',
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], ''),
    ],
  ])('maps %s to a 503 naming the database', (_, err) => {
    const mapped = dependencyUnavailable(err);
    expect(mapped).toMatchObject({ code: 'unavailable', status: 503, headers: { 'Retry-After': '5' } });
    expect(mapped?.message).toMatch(/database/);
  });

  it.each([
    ['gRPC UNAVAILABLE', grpcError(14, 'No connection established')],
    ['gRPC DEADLINE_EXCEEDED', grpcError(4, 'Deadline exceeded')],
    ['gRPC RESOURCE_EXHAUSTED', grpcError(8, 'namespace rate limit exceeded')],
    [
      'a ServiceError caused by UNAVAILABLE',
      new ServiceError('Failed to start', { cause: grpcError(14, 'down') }),
    ],
  ])('maps %s to a 503 naming the approval service', (_, err) => {
    expect(dependencyUnavailable(err)?.message).toMatch(/approval service/);
  });

  it.each([
    ['a deadlock (40P01)', pgError('40P01', 'deadlock detected')],
    ['a serialization failure (40001)', pgError('40001', 'could not serialize access')],
    ['a lock not available (55P03)', pgError('55P03', 'could not obtain lock on row')],
  ])('maps %s to a 503 saying the database is busy', (_, err) => {
    const mapped = dependencyUnavailable(err);
    expect(mapped).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    expect(mapped?.message).toMatch(/database is busy/);
  });

  it.each([
    [
      'an undici headers time-out',
      Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
    ],
    [
      'an undici connect time-out',
      Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
    ],
    [
      'an AbortSignal.timeout firing',
      new Error('fetch failed', { cause: new DOMException('timed out', 'TimeoutError') }),
    ],
  ])('maps %s to a 503 saying a service did not answer in time', (_, err) => {
    const mapped = dependencyUnavailable(err);
    expect(mapped).toMatchObject({ status: 503, headers: { 'Retry-After': '5' } });
    expect(mapped?.message).toMatch(/did not answer in time/);
  });

  it.each([
    ['a programming error', new TypeError('x is not a function')],
    ['a constraint violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error', pgError('42601', 'syntax error at or near "SELEC"')],
    ['gRPC INVALID_ARGUMENT', grpcError(3, 'bad request')],
    [
      'an undici response error',
      Object.assign(new Error('Response status code 500'), { code: 'UND_ERR_RESPONSE_STATUS_CODE' }),
    ],
    ['an abort by the caller', new DOMException('aborted', 'AbortError')],
    ['not an error', 'ECONNREFUSED'],
    ['undefined', undefined],
  ])('leaves %s alone (a 500)', (_, err) => {
    expect(dependencyUnavailable(err)).toBeUndefined();
  });
});
