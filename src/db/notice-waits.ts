import type { Logger } from '../logger.ts';
import type { Db } from './knex.ts';
import { listen } from './pg-listen.ts';

/** One wait for a notice. */
export interface NoticeWait {
  /** True once the notice came; false when the notices stopped first (it may have gone by unheard). */
  heard: Promise<boolean>;
  /** Stops waiting (the answer came some other way). */
  cancel(): void;
}

/** The waits on one channel's notices, each keyed by its payload (an id). */
export interface NoticeWaits {
  /**
   * Starts waiting for the notice whose payload is `key`; start before whatever leads to the write, so the notice
   * cannot go by first. Undefined while the notices are not heard at all (the caller reads the row instead).
   */
  watch(key: string): NoticeWait | undefined;
}

/**
 * Waits on the notices PostgreSQL sends on `channels` when a transaction commits, heard on one connection of this
 * process's own. Lets a request wait for a write another process commits (the workflow's worker) without reading
 * the row again and again.
 */
export async function createNoticeWaits<C extends string>(options: {
  db: Db;
  logger: Logger;
  channels: readonly C[];
  /** What the notices are for, in log lines. */
  what: string;
}): Promise<{ on(channel: C): NoticeWaits; close(): Promise<void> }> {
  const waiters = new Map<string, Map<string, Set<(heard: boolean) => void>>>(
    options.channels.map((channel) => [channel, new Map()]),
  );
  const settleAll = (heard: boolean) => {
    for (const byKey of waiters.values()) {
      for (const set of byKey.values()) for (const settle of set) settle(heard);
      byKey.clear();
    }
  };
  const notices = await listen(
    options.db,
    options.channels,
    {
      notice(channel, payload) {
        const byKey = waiters.get(channel);
        const set = payload === undefined ? undefined : byKey?.get(payload);
        if (!set) return;
        byKey!.delete(payload!);
        for (const settle of set) settle(true);
      },
      up: () => undefined,
      down: () => settleAll(false),
    },
    { logger: options.logger, what: options.what },
  );
  return {
    on(channel) {
      const byKey = waiters.get(channel)!;
      return {
        watch(key) {
          if (!notices.up) return undefined;
          let settle!: (heard: boolean) => void;
          const heard = new Promise<boolean>((resolve) => (settle = resolve));
          const set = byKey.get(key) ?? new Set();
          set.add(settle);
          byKey.set(key, set);
          return {
            heard,
            cancel() {
              const current = byKey.get(key);
              current?.delete(settle);
              if (current?.size === 0) byKey.delete(key);
            },
          };
        },
      };
    },
    async close() {
      await notices.close();
      settleAll(false);
    },
  };
}
