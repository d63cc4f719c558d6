import { BlockList, isIP } from 'node:net';

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
