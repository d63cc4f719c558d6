import os from 'node:os';
import { secretBoxFromSettings } from '../auth/secret-box.ts';
import { loadConfig } from '../config.ts';
import { createDb } from '../db/knex.ts';
import { createLogger } from '../logger.ts';
import { createMemoryRateLimiter } from '../rate-limit/memory-rate-limiter.ts';
import { createStorage } from '../storage/create-storage.ts';
import { createTemporalClient } from '../temporal/client.ts';
import { API_PREFIX, createApp } from './app.ts';
import { openApiDocument } from './openapi/openapi-routes.ts';
import { OpenApiRegistry } from './openapi/registry.ts';

/**
 * The OpenAPI document exactly as GET /api/v1/openapi.json serves it, built in-process: the app is assembled
 * (which is what registers every operation) on connections that are all lazy, so nothing is reached or started.
 * The document holds no configured value, so the settings used here do not show in it.
 */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: os.tmpdir() });
  const db = createDb('postgres://unused@127.0.0.1:1/unused');
  const temporal = createTemporalClient({ address: '127.0.0.1:1', namespace: config.temporal.namespace });
  const openapi = new OpenApiRegistry();
  try {
    createApp({
      config,
      db,
      temporal,
      logger: createLogger(config),
      rateLimiter: createMemoryRateLimiter(),
      storage: createStorage(config),
      secrets: secretBoxFromSettings(config.encryption),
      openapi,
    });
    return openApiDocument(openapi, API_PREFIX);
  } finally {
    await db.destroy();
    await temporal.close().catch(() => undefined);
  }
}

/** The committed file's text: two-space JSON and a final newline, so its diffs read line by line. */
export function formatOpenApiFile(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
