import { expect } from 'vitest';
import { escapeHtml } from '../../src/http/html.ts';

/**
 * The worst values for text a person reads: every bidi embedding, override and isolate control (U+202A–U+202E,
 * U+2066–U+2069) at least once, in the middle, at the end, left open, and mixed with Arabic.
 */
export const BIDI_WORST: readonly (readonly [string, string])[] = [
  ['an override in the middle', 'Invoice \u202Efdp.exe'],
  ['an override at the end', 'Invoice\u202E'],
  ['an isolate left open', '\u2067Contract'],
  ['a first-strong isolate closed', 'Contract \u2068x\u2069'],
  ['a pop alone', 'Contract\u202C'],
  ['a left-to-right override in Arabic', 'عقد \u202Dعمل'],
  ['a right-to-left embedding in Arabic', 'عقد \u202Bعمل\u202C'],
  ['a left-to-right embedding after Arabic', 'عقد\u202A 2026'],
  ['a left-to-right isolate in Arabic, open', 'عقد \u2066Supply'],
];

/**
 * Asserts that each value occurs in the page's visible text, and that every occurrence is the whole content of a
 * `<bdi>` (the page's `<title>`, attributes and JSON scripts are not visible text and are left out).
 */
export function expectIsolated(page: string, values: readonly string[]): void {
  const visible = page
    .replace(/<title>[\s\S]*?<\/title>/g, '')
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<\/bdi\s+>/g, '</bdi>')
    // Every tag but <bdi> and </bdi> becomes a break, so no value can run across one.
    .replace(/<(?!\/?bdi\b)[^>]*>/g, '\u0001');
  for (const value of values) {
    const escaped = escapeHtml(value);
    const all = visible.split(escaped).length - 1;
    // Only <bdi> tags are left, so a ">" before the value closes one (a ">" in text is escaped).
    const isolated = visible.split(`>${escaped}</bdi>`).length - 1;
    expect(all, `${JSON.stringify(value)} is on the page`).toBeGreaterThan(0);
    expect({ value, isolated }).toEqual({ value, isolated: all });
  }
}
