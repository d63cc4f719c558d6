import type { Db } from '../../db/knex.ts';
import { API_KEYS_CHANNEL, apiKeysStore, type ApiKeyWithAccount } from './api-keys-store.ts';
import { listen } from '../../db/pg-listen.ts';
import type { Logger } from '../../logger.ts';

/** How authentication finds a key: in PostgreSQL each time, or through the cache below. */
export interface ApiKeyLookup {
  find(key: string): Promise<ApiKeyWithAccount | undefined>;
  close(): Promise<void>;
}

export function uncachedApiKeyLookup(db: Db): ApiKeyLookup {
  const store = apiKeysStore(db);
  return { find: (key) => store.findForAuthentication(key), close: () => Promise.resolve() };
}

export interface ApiKeyCacheOptions {
  db: Db;
  logger: Logger;
  /** How long an entry is trusted without a notice (a backstop: notices drop entries at once). */
  ttlMs: number;
  maxEntries?: number;
  /** Waits between attempts to (re)open the LISTEN connection. */
  reconnectDelayMs?: number;
}

/**
 * The keys this process has authenticated, in memory, so a request costs no query to find its key. Correct only
 * while a change anywhere reaches every process at once: PostgreSQL announces each change to a key or an account's
 * plan on API_KEYS_CHANNEL when it commits (migration 017), and this cache listens on its own connection and drops
 * the entry. While that connection is down the cache holds nothing and every lookup reads PostgreSQL, so a missed
 * notice can never let a revoked key in. Unknown keys are never cached (an attacker's guesses cost memory nothing).
 */
export async function createApiKeyCache(options: ApiKeyCacheOptions): Promise<ApiKeyLookup> {
  const { db, logger, ttlMs } = options;
  const maxEntries = options.maxEntries ?? 10_000;
  const store = apiKeysStore(db);
  const entries = new Map<string, { record: ApiKeyWithAccount; expiresAt: number }>();
  // Bumped by every notice and every loss of the connection: a read that started before a change must not store
  // what it read after the change's notice went by.
  let generation = 0;

  const invalidate = (payload: string | undefined) => {
    generation += 1;
    if (payload?.startsWith('account:')) {
      const accountId = payload.slice('account:'.length);
      for (const [key, entry] of entries) if (entry.record.accountId === accountId) entries.delete(key);
    } else if (payload) {
      entries.delete(payload);
    } else {
      entries.clear();
    }
  };

  const notices = await listen(
    db,
    [API_KEYS_CHANNEL],
    {
      notice: (_channel, payload) => invalidate(payload),
      up: () => invalidate(undefined),
      down: () => invalidate(undefined),
    },
    { logger, what: 'API key notices', reconnectDelayMs: options.reconnectDelayMs },
  );

  return {
    async find(key) {
      if (notices.up && ttlMs > 0) {
        const hit = entries.get(key);
        if (hit && hit.expiresAt > Date.now()) return hit.record;
      }
      const before = generation;
      const record = await store.findForAuthentication(key);
      if (record && notices.up && ttlMs > 0 && generation === before) {
        entries.delete(key);
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(key, { record, expiresAt: Date.now() + ttlMs });
      }
      return record;
    },
    async close() {
      await notices.close();
      entries.clear();
    },
  };
}
