import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import { port } from './fields.ts';
import { defineSlice, type NodeEnv } from './slice.ts';

export interface HttpConfig {
  http: {
    host: string;
    port: number;
    publicBaseUrl: string;
    jsonBodyLimit: string;
    /** Reverse proxies in front of the API: X-Forwarded-For entries they add are trusted, no others. */
    proxyHops: number;
  };
}

export const httpSlice = defineSlice({
  title: 'HTTP',
  about:
    'Where the API listens, the address its links carry, and what it reads from the proxies in front of it.',
  env: {
    HOST: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe(
        'where the API listens; the dev inbox and the console WhatsApp provider need a loopback HOST (127.0.0.1, ::1, localhost)',
      ),
    PORT: port.default(3000).describe('the port the API listens on'),
    PUBLIC_BASE_URL: z
      .url()
      .optional()
      .describe(
        'the base of every public link Wathiq hands out (download URLs, approval pages); must be https when NODE_ENV=production (start-up refuses http), and https also turns on HSTS',
      ),
    TRUST_PROXY: z
      .string()
      .trim()
      .regex(/^(true|false|\d{1,2})$/, 'the number of reverse proxies in front of the API (0 = none)')
      .transform((v) => (v === 'true' ? 1 : v === 'false' ? 0 : Number(v)))
      .pipe(z.number().int().min(0).max(10))
      .default(0)
      .describe(
        'how many reverse proxies in front of the API (0-10) append to X-Forwarded-For; 0: the header is ignored (false and true, the old switch, mean 0 and 1)',
      ),
    JSON_BODY_LIMIT: z
      .string()
      .regex(/^\d+(b|kb|mb)$/i, 'a size such as 1mb or 512kb')
      .default('1mb')
      .describe('the largest JSON body'),
  },
  derivedDefaults: {
    HOST: '127.0.0.1, or 0.0.0.0 when NODE_ENV=production',
    PUBLIC_BASE_URL: 'http://localhost:$PORT',
  },
  checks: {
    production: (e, ctx) => {
      if (ctx.nodeEnv !== 'production') return [];
      const publicUrl = e.PUBLIC_BASE_URL === undefined ? undefined : new URL(e.PUBLIC_BASE_URL);
      if (publicUrl?.protocol === 'https:') return [];
      return [
        `PUBLIC_BASE_URL: must be an https URL when NODE_ENV=production (approval links and downloads carry their tokens in the path), not ${e.PUBLIC_BASE_URL ?? 'unset'}`,
      ];
    },
  },
  build: (e, ctx): HttpConfig => ({
    http: {
      host: ctx.host,
      port: e.PORT,
      publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
      jsonBodyLimit: e.JSON_BODY_LIMIT,
      proxyHops: e.TRUST_PROXY,
    },
  }),
});

/** HOST, or where the API listens without it: loopback outside production, every address in production. */
export function listenHost(host: string | undefined, nodeEnv: NodeEnv): string {
  return host ?? (nodeEnv === 'production' ? '0.0.0.0' : '127.0.0.1');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * True when `host` (a HOST value: an address or a name to listen on) reaches this machine only: 127.0.0.0/8,
 * ::1, an IPv4-mapped loopback address, or `localhost`. `0.0.0.0`, `::` and every other address are not.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  if (isIP(v4) === 4) return LOOPBACK.check(v4, 'ipv4');
  return isIP(h) === 6 && LOOPBACK.check(h, 'ipv6');
}

/**
 * The development inbox and the console WhatsApp provider hand every approval link to whoever opens the page, so
 * they exist only outside production and only on a server that listens on loopback.
 */
export function devToolsAllowed(config: { env: string; http: { host: string } }): boolean {
  return config.env !== 'production' && isLoopbackHost(config.http.host);
}
