/**
 * The origins an account lets frame its approval pages (issue 15 item 6): each an https origin — scheme, host and
 * an optional port, nothing else — or `https://*.example.com` for every subdomain of a registrable-looking domain.
 * Each is checked strictly, because it is written verbatim into the page's Content-Security-Policy
 * (`frame-ancestors`): no paths, queries, credentials, whitespace, semicolons, quotes or bare wildcards.
 */
export const EMBED_ORIGINS_MAX = 10;

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST = `${LABEL}(?:\\.${LABEL})+`;
const PORT = '(?::(?:[1-9][0-9]{0,4}))?';
const ORIGIN = new RegExp(`^https://(?:\\*\\.)?${HOST}${PORT}$`);

/** The origin in its canonical form (lower case, no default port), or the reason it is refused. */
export function checkEmbedOrigin(
  value: string,
): { ok: true; origin: string } | { ok: false; message: string } {
  const lower = value.toLowerCase();
  if (lower.length > 253 + 16) return { ok: false, message: 'is too long' };
  if (!lower.startsWith('https://')) return { ok: false, message: 'must be an https origin (https://host)' };
  if (!ORIGIN.test(lower)) {
    return {
      ok: false,
      message:
        'must be an origin: https://, a host name with a dot, an optional port, and no path, query or wildcard other than a leading *.',
    };
  }
  const port = /:(\d+)$/.exec(lower)?.[1];
  if (port !== undefined && Number(port) > 65535) return { ok: false, message: 'has a port above 65535' };
  const canonical = port === '443' ? lower.slice(0, -':443'.length) : lower;
  // A wildcard must leave at least two labels under it (`*.example.com`, not `*.com`).
  if (canonical.startsWith('https://*.')) {
    const host = canonical.slice('https://*.'.length).replace(/:\d+$/, '');
    if (host.split('.').length < 2) return { ok: false, message: 'wildcard needs a domain under it' };
  }
  const host = canonical.slice('https://'.length).replace(/^\*\./, '').replace(/:\d+$/, '');
  if (/^[0-9.]+$/.test(host)) return { ok: false, message: 'must name a host, not an IP address' };
  return { ok: true, origin: canonical };
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
