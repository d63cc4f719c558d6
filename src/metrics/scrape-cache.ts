/**
 * A value read from the database when Prometheus scrapes, reused for `cacheMs` so scrapes cannot hammer the
 * database; concurrent scrapes share the read in flight, and a failing database is not asked more often.
 */
export interface ScrapeCache<T> {
  /** The last value read (read again first when older than cacheMs); undefined until one read succeeded. */
  fresh(): Promise<T | undefined>;
  /** Reads that failed (the cache kept its previous value). */
  failures(): number;
}

export function scrapeCache<T>(options: {
  read(): Promise<T>;
  cacheMs: number;
  onError(err: unknown): void;
  now?: () => number;
}): ScrapeCache<T> {
  const now = options.now ?? Date.now;
  let cached: T | undefined;
  /** When the last read started, whether it succeeded or not. */
  let readAt: number | undefined;
  let inFlight: Promise<void> | undefined;
  let failed = 0;
  const refresh = async () => {
    readAt = now();
    try {
      cached = await options.read();
    } catch (err) {
      failed++;
      options.onError(err);
    }
  };
  return {
    async fresh() {
      if (readAt === undefined || now() - readAt >= options.cacheMs)
        inFlight ??= refresh().finally(() => (inFlight = undefined));
      // A read another scrape started is awaited too, so no scrape answers with the value it is replacing.
      if (inFlight) await inFlight;
      return cached;
    },
    failures: () => failed,
  };
}
