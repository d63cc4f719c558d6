import { describe, expect, it } from 'vitest';
import {
  MAX_ATTEMPTS,
  MAX_RETRY_DELAY_MS,
  nextAttemptDelay,
  RETRY_DELAYS_MS,
} from '../../src/features/webhooks/workflow/retry-schedule.ts';

const s = 1000;
const min = 60 * s;
const h = 60 * min;

describe('retry schedule', () => {
  it('is the Standard Webhooks schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(RETRY_DELAYS_MS).toEqual([0, 5 * s, 5 * min, 30 * min, 2 * h, 5 * h, 10 * h, 10 * h]);
    expect(MAX_ATTEMPTS).toBe(8);
    expect(MAX_RETRY_DELAY_MS).toBe(10 * h);
    expect(Object.isFrozen(RETRY_DELAYS_MS)).toBe(true);
  });

  it('gives the wait after each failed attempt, and undefined after the eighth', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => nextAttemptDelay(n));
    expect(waits).toEqual([5 * s, 5 * min, 30 * min, 2 * h, 5 * h, 10 * h, 10 * h, undefined]);
    expect(nextAttemptDelay(9)).toBeUndefined();
    expect(() => nextAttemptDelay(0)).toThrow(RangeError);
    expect(() => nextAttemptDelay(1.5)).toThrow(RangeError);
  });

  it('honours Retry-After within the bounds: never sooner than scheduled, never later than 10 h', () => {
    expect(nextAttemptDelay(1, 60 * s)).toBe(60 * s);
    expect(nextAttemptDelay(1, 1 * s)).toBe(5 * s);
    expect(nextAttemptDelay(3, 0)).toBe(30 * min);
    expect(nextAttemptDelay(2, 3 * h)).toBe(3 * h);
    expect(nextAttemptDelay(2, 48 * h)).toBe(10 * h);
    expect(nextAttemptDelay(7, 1 * s)).toBe(10 * h);
    expect(nextAttemptDelay(8, 1 * s)).toBeUndefined();
    expect(nextAttemptDelay(1, Number.NaN)).toBe(5 * s);
  });

  it('scales every delay, Retry-After included, for tests', () => {
    expect(nextAttemptDelay(1, undefined, { scale: 0.001 })).toBe(5);
    expect(nextAttemptDelay(7, undefined, { scale: 0.001 })).toBe(36_000);
    expect(nextAttemptDelay(1, 60 * s, { scale: 0.001 })).toBe(60);
    expect(nextAttemptDelay(1, 48 * h, { scale: 0 })).toBe(0);
    expect(nextAttemptDelay(8, undefined, { scale: 0.001 })).toBeUndefined();
    expect(() => nextAttemptDelay(1, undefined, { scale: -1 })).toThrow(RangeError);
  });
});
