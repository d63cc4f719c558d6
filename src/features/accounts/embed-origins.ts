import { parse } from 'tldts';

/**
 * The origins an account lets frame its approval pages: each an https origin — scheme, host and
 * an optional port, nothing else — or `https://*.example.com` for every subdomain of a registrable domain.
 * Each is checked strictly, because it is written verbatim into the page's Content-Security-Policy
 * (`frame-ancestors`): no paths, queries, credentials, whitespace, semicolons, quotes or bare wildcards.
 *
 * A wildcard over a public suffix would let anyone frame the page: whoever registers a name under `co.uk`, or
 * publishes a site under `github.io`, owns a subdomain of it. What is a public suffix is the Public Suffix List's
 * to say (its ICANN and private sections, through tldts, which ships the list and is updated with it), so such a
 * wildcard is refused here and, since every origin is checked again on the way into the header, one stored before
 * its suffix joined the list stops counting too.
 */
export const EMBED_ORIGINS_MAX = 10;

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** The last label starts with a letter: a name, never an IP address. */
const TOP = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST = `(?:${LABEL}\\.)+${TOP}`;
const PORT = '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?';

/** The whole rule as one regular expression, also published as the OpenAPI `pattern`. */
export const EMBED_ORIGIN_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]://(?:\\*\\.)?${HOST}${PORT}$`;
/** https:// (8), "*." (2), a host name (253), ":65535" (6). */
export const EMBED_ORIGIN_MAX_LENGTH = 269;
const ORIGIN = new RegExp(EMBED_ORIGIN_PATTERN);

/** The origin in its canonical form (lower case, no default port), or the reason it is refused. */
export function checkEmbedOrigin(
  value: string,
): { ok: true; origin: string } | { ok: false; message: string; publicSuffix?: string } {
  if (value.length > EMBED_ORIGIN_MAX_LENGTH) return { ok: false, message: 'is too long' };
  if (!/^https:\/\//i.test(value)) return { ok: false, message: 'must be an https origin (https://host)' };
  if (!ORIGIN.test(value)) {
    return {
      ok: false,
      message:
        'must be an origin: https://, a host name with a dot, an optional port, and no path, query or wildcard other than a leading *.',
    };
  }
  const lower = value.toLowerCase();
  const wildcardOver = /^https:\/\/\*\.([^:]+)/.exec(lower)?.[1];
  if (wildcardOver !== undefined && isPublicSuffix(wildcardOver)) {
    return {
      ok: false,
      message: `cannot be a wildcard over ${wildcardOver}, a public suffix (anyone can have a name under it); name your own domain: https://*.yourdomain.${wildcardOver}`,
      publicSuffix: wildcardOver,
    };
  }
  return { ok: true, origin: lower.endsWith(':443') ? lower.slice(0, -':443'.length) : lower };
}

/** Whether `host` is a public suffix itself (no registrable domain at or above it), private section included. */
function isPublicSuffix(host: string): boolean {
  return parse(host, { allowPrivateDomains: true }).domain === null;
}

/** The `frame-ancestors` source list for these origins: `'none'` without any. */
export function frameAncestors(origins: readonly string[]): string {
  // Re-checked on the way out: only what passes the rule ever reaches a header.
  const safe = origins.flatMap((o) => {
    const r = checkEmbedOrigin(o);
    return r.ok ? [r.origin] : [];
  });
  return safe.length === 0 ? "'none'" : safe.join(' ');
}
