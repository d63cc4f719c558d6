import { describe, expect, it } from 'vitest';
import { ifRangeHolds, noneMatch, parseRange } from '../../src/api/byte-range.ts';

describe('parseRange', () => {
  it.each([
    [undefined, { kind: 'whole' }],
    ['bytes=0-99', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=900-', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=990-5000', { kind: 'partial', start: 990, end: 999 }],
    ['bytes=-10', { kind: 'partial', start: 990, end: 999 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 999 }],
    ['bytes=999-999', { kind: 'partial', start: 999, end: 999 }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=1000-2000', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    // Ignored: the whole file.
    ['bytes=5-1', { kind: 'whole' }],
    ['bytes=-', { kind: 'whole' }],
    ['bytes=0-1,5-9', { kind: 'whole' }],
    ['items=0-1', { kind: 'whole' }],
    ['bytes=99999999999999999999-', { kind: 'whole' }],
  ])('%s of 1000 bytes → %o', (header, expected) => {
    expect(parseRange(header, 1000)).toEqual(expected);
  });
});

describe('conditional headers', () => {
  const etag = '"abc"';
  it('If-None-Match matches weakly, in a list, and *', () => {
    expect(noneMatch('"abc"', etag)).toBe(true);
    expect(noneMatch('W/"abc"', etag)).toBe(true);
    expect(noneMatch('"x", "abc"', etag)).toBe(true);
    expect(noneMatch('*', etag)).toBe(true);
    expect(noneMatch('"abd"', etag)).toBe(false);
    expect(noneMatch(undefined, etag)).toBe(false);
  });

  it('If-Range holds only for the same strong tag (or when absent)', () => {
    expect(ifRangeHolds(undefined, etag)).toBe(true);
    expect(ifRangeHolds('"abc"', etag)).toBe(true);
    expect(ifRangeHolds('W/"abc"', etag)).toBe(false);
    expect(ifRangeHolds('Sat, 21 Nov 2026 10:00:00 GMT', etag)).toBe(false);
  });
});
