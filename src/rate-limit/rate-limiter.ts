/**
 * Fixed one-minute windows per bucket (one bucket per API key). A fixed window is exact, cheap to share through
 * one row per key and minute in PostgreSQL, and its reset time is what X-RateLimit-Reset reports.
 */
export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix time, seconds, when the current window ends. */
  resetAt: number;
}

export interface RateLimiter {
  hit(bucket: string, limit: number): Promise<RateLimitResult>;
  close?(): void;
}

export const WINDOW_MS = 60_000;

export function windowStart(nowMs: number): number {
  return Math.floor(nowMs / WINDOW_MS) * WINDOW_MS;
}

export function toResult(count: number, limit: number, startMs: number): RateLimitResult {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetAt: Math.ceil((startMs + WINDOW_MS) / 1000),
  };
}
