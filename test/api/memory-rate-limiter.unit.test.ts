import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.ts';

describe('memory rate limiter', () => {
  it('allows `limit` hits per minute window, then refuses until the window turns', async () => {
    let now = Date.UTC(2026, 10, 22, 9, 41, 10);
    const limiter = createMemoryRateLimiter(() => now);
    for (let i = 1; i <= 3; i++) {
      const r = await limiter.hit('a', 3);
      expect(r).toMatchObject({ allowed: true, limit: 3, remaining: 3 - i });
    }
    const refused = await limiter.hit('a', 3);
    expect(refused).toMatchObject({
      allowed: false,
      remaining: 0,
      resetAt: Date.UTC(2026, 10, 22, 9, 42) / 1000,
    });
    expect((await limiter.hit('b', 3)).allowed).toBe(true);
    now += 50_000;
    expect((await limiter.hit('a', 3)).allowed).toBe(true);
  });
});
