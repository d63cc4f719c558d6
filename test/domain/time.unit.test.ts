import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/domain/time.ts';

/** What the wire format is by definition: toISOString's UTC fields, milliseconds dropped, `+00:00` for `Z`. */
const byDefinition = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, '+00:00');

describe('isoTime', () => {
  it('formats every field in UTC, whole seconds, with +00:00', () => {
    expect(isoTime(new Date('2026-01-02T03:04:05.999Z'))).toBe('2026-01-02T03:04:05+00:00');
    expect(isoTime('2026-11-22T12:41:00.123+03:00')).toBe('2026-11-22T09:41:00+00:00');
    expect(isoTime(new Date('2026-12-31T23:59:59.000Z'))).toBe('2026-12-31T23:59:59+00:00');
  });

  it('agrees with toISOString over a spread of times, and at the years it formats itself', () => {
    const times = [
      ...Array.from({ length: 2000 }, (_, i) => Date.UTC(1970, 0, 1) + i * 7_919_993_337),
      Date.UTC(1000, 0, 1),
      Date.UTC(999, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1),
      Date.UTC(-1, 5, 6, 7, 8, 9),
      8.64e15,
      -8.64e15,
    ];
    for (const t of times) expect(isoTime(new Date(t))).toBe(byDefinition(new Date(t)));
  });

  it('answers null for no time and refuses what is no time', () => {
    expect(isoTime(null)).toBeNull();
    expect(isoTime(undefined)).toBeNull();
    expect(() => isoTime('yesterday')).toThrow(RangeError);
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
    expect(() => isoTime('__proto__')).toThrow(RangeError);
  });
});
