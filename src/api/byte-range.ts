/**
 * HTTP byte ranges (RFC 9110 §14) for files served whole or in part. One range is served; a header the server
 * cannot or need not honour (another unit, several ranges, bad syntax) is ignored and the whole file is sent,
 * which the RFC allows.
 */
export type RangeRequest =
  { kind: 'whole' } | { kind: 'unsatisfiable' } | { kind: 'partial'; start: number; end: number };

export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (!header) return { kind: 'whole' };
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    // Suffix: the last N bytes.
    const n = Number(last);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Number.MAX_SAFE_INTEGER : Number(last);
  // A last position before the first is a syntax error, which makes the whole header ignored.
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

/** Entity tags in an If-None-Match / If-Range header value; `*` stays as it is. */
const tagsOf = (header: string): string[] =>
  header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/** If-None-Match uses the weak comparison: `W/"x"` matches `"x"`. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (t: string) => t.replace(/^W\//, '');
  return tagsOf(header).some((t) => t === '*' || bare(t) === bare(etag));
}

/** If-Range uses the strong comparison; a date (or anything else) never matches a file served by ETag. */
export function ifRangeHolds(header: string | undefined, etag: string): boolean {
  return header === undefined || header.trim() === etag;
}
