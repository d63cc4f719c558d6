import { isIP, type LookupFunction } from 'node:net';
import { forbiddenAddressReason, type ResolveHost } from './ssrf-guard.ts';

/** A webhook receiver's name that resolves to an address webhooks must not reach, found at connection time. */
export class ForbiddenAddressError extends Error {
  readonly code = 'WATHIQ_FORBIDDEN_ADDRESS';
  constructor(hostname: string, address: string, reason: string) {
    super(`${hostname} resolves to ${address}, which is not a public address (${reason})`);
    this.name = 'ForbiddenAddressError';
  }
}

/**
 * A `net.connect` lookup that resolves with `resolve` and refuses the connection when any address is forbidden,
 * the same rule as at creation. Supports both shapes Node asks for (`all: true` with autoSelectFamily, or one).
 */
export function guardedLookup(resolve: ResolveHost, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    resolve(hostname).then(
      (found) => {
        if (!allowPrivate) {
          for (const address of found) {
            const reason = forbiddenAddressReason(address);
            if (reason) return callback(new ForbiddenAddressError(hostname, address, reason), '');
          }
        }
        const usable = found
          .map((address) => ({ address, family: isIP(address) }))
          .filter((a) => a.family !== 0 && (wanted === 0 || a.family === wanted));
        const first = usable[0];
        if (!first) return callback(dnsError(hostname, 'ENOTFOUND', 'no usable address'), '');
        if (options.all) return callback(null, usable);
        return callback(null, first.address, first.family);
      },
      (err: unknown) => {
        const code = (err as { code?: unknown }).code;
        const detail = err instanceof Error ? err.message : String(err);
        callback(dnsError(hostname, typeof code === 'string' ? code : 'ENOTFOUND', detail), '');
      },
    );
  };
}

function dnsError(hostname: string, code: string, detail: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`DNS lookup of ${hostname} failed: ${detail}`), {
    code,
    hostname,
    syscall: 'getaddrinfo',
  });
}
