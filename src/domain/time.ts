/**
 * The one wire format of a time (docs/product-rules.md §1): ISO 8601 in UTC with an explicit `+00:00` offset, whole
 * seconds (`2026-11-22T09:41:00+00:00`). API responses, webhook bodies and the dashboard all format times here.
 * Pure, so workflow code may import it.
 */
export function isoTime(value: Date | string): string;
export function isoTime(value: Date | string | null | undefined): string | null;
export function isoTime(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) throw new RangeError(`not a valid time: ${String(value)}`);
  return date.toISOString().replace(/\.\d{3}Z$/, '+00:00');
}
