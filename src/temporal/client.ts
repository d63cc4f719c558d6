import { Client, Connection, type ClientInterceptors } from '@temporalio/client';
import type { TemporalConnectionOptions } from './connection-options.ts';

export interface TemporalClientHandle {
  client: Client;
  connection: Connection;
  close(): Promise<void>;
}

/**
 * A lazy connection: the API starts (and reports Temporal as down on /health) even while the Temporal server is
 * unreachable, and connects on first use.
 */
export function createTemporalClient(
  options: TemporalConnectionOptions & {
    namespace: string;
    /** Tracing's client interceptors (src/tracing/sdk.ts), when tracing is on. */
    interceptors?: ClientInterceptors;
  },
): TemporalClientHandle {
  const connection = Connection.lazy({
    address: options.address,
    tls: options.tls,
    apiKey: options.apiKey,
    connectTimeout: '5 seconds',
  });
  const client = new Client({
    connection,
    namespace: options.namespace,
    ...(options.interceptors && { interceptors: options.interceptors }),
  });
  return { client, connection, close: () => connection.close() };
}

/** True when the frontend answers its gRPC health check within the timeout. */
export async function checkTemporal(connection: Connection, timeoutMs = 2000): Promise<void> {
  await connection.withDeadline(Date.now() + timeoutMs, () => connection.healthService.check({}));
}
