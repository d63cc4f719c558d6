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

/**
 * Waits on the notices PostgreSQL sends on one channel when a transaction commits, each keyed by its payload (an
 * id), heard on a connection of this process's own. Lets a request wait for a write another process commits
 * (the workflow's worker) without reading the row again and again.
 */
export interface NoticeWaits {
  /**
   * Starts waiting for the notice whose payload is `key`; start before whatever leads to the write, so the notice
   * cannot go by first. Undefined while the notices are not heard at all (the caller reads the row instead).
   */
  watch(key: string): NoticeWait | undefined;
  close(): Promise<void>;
}

export async function createNoticeWaits(options: {
  db: Db;
  logger: Logger;
  channel: string;
  /** What the notices are for, in log lines. */
  what: string;
}): Promise<NoticeWaits> {
  const waiters = new Map<string, Set<(heard: boolean) => void>>();
  const settleAll = (heard: boolean) => {
    for (const set of waiters.values()) for (const settle of set) settle(heard);
    waiters.clear();
  };
  const notices = await listen(
    options.db,
    options.channel,
    {
      notice(payload) {
        const set = payload === undefined ? undefined : waiters.get(payload);
        if (!set) return;
        waiters.delete(payload!);
        for (const settle of set) settle(true);
      },
      up: () => undefined,
      down: () => settleAll(false),
    },
    { logger: options.logger, what: options.what },
  );
  return {
    watch(key) {
      if (!notices.up) return undefined;
      let settle!: (heard: boolean) => void;
      const heard = new Promise<boolean>((resolve) => (settle = resolve));
      const set = waiters.get(key) ?? new Set();
      set.add(settle);
      waiters.set(key, set);
      return {
        heard,
        cancel() {
          const current = waiters.get(key);
          current?.delete(settle);
          if (current?.size === 0) waiters.delete(key);
        },
      };
    },
    async close() {
      await notices.close();
      settleAll(false);
    },
  };
}
