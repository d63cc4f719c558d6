import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { AppError } from '../../errors.ts';

/**
 * Webhook URLs are chosen by customers, and the deliverer runs inside our network: without this guard a webhook
 * could make the worker call the database, the Temporal frontend or the cloud metadata service. The check runs
 * twice: at creation (`assertWebhookUrl`, a 422) and on every connection (`deliver.ts` gives undici a lookup
 * that refuses forbidden addresses), so a name that re-resolves to a private address is never called.
 */

/** Resolves a host name to every address it has (IPv4 and IPv6). Injectable so tests need no DNS. */
export type ResolveHost = (hostname: string) => Promise<readonly string[]>;

export const systemResolveHost: ResolveHost = async (hostname) => {
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

type V4Range = readonly [base: string, prefix: number, reason: string];

// Special-purpose IPv4 blocks (RFC 6890 and the IANA registry) that are not the public internet.
const V4_FORBIDDEN: readonly V4Range[] = [
  ['0.0.0.0', 8, 'unspecified, "this network"'],
  ['10.0.0.0', 8, 'private, RFC 1918'],
  ['100.64.0.0', 10, 'carrier-grade NAT, RFC 6598'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local / cloud metadata'],
  ['172.16.0.0', 12, 'private, RFC 1918'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'private, RFC 1918'],
  ['198.18.0.0', 15, 'benchmarking, RFC 2544'],
  ['168.63.129.16', 32, 'cloud metadata, Azure'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved / broadcast'],
];

const V4_TABLE = V4_FORBIDDEN.map(([base, prefix, reason]) => ({
  base: v4ToInt(base)!,
  mask: prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0,
  reason,
}));

/** Why `ip` may not be called by a webhook, or undefined when it is a public address. Not an IP: refused. */
export function forbiddenAddressReason(ip: string): string | undefined {
  const bare = ip.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return v4Reason(v4ToInt(bare)!);
  if (family === 6) return v6Reason(v6ToWords(bare));
  return 'not an IP address';
}

export function isForbiddenAddress(ip: string): boolean {
  return forbiddenAddressReason(ip) !== undefined;
}

function v4Reason(n: number): string | undefined {
  return V4_TABLE.find((r) => (n & r.mask) >>> 0 === r.base)?.reason;
}

function v6Reason(w: readonly number[]): string | undefined {
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = w;
  const embeddedV4 = ((w6 << 16) | w7) >>> 0;
  const zeroUpTo = (n: number) => w.slice(0, n).every((x) => x === 0);

  if (zeroUpTo(7) && w7 === 0) return 'unspecified';
  if (zeroUpTo(7) && w7 === 1) return 'loopback';
  // ::ffff:a.b.c.d reaches the IPv4 address itself on a dual-stack socket.
  if (zeroUpTo(5) && w5 === 0xffff) return describeEmbedded(embeddedV4, 'IPv4-mapped');
  // ::a.b.c.d (deprecated IPv4-compatible) and ::ffff:0:a.b.c.d (SIIT) are never public.
  if (zeroUpTo(6)) return 'IPv4-compatible, deprecated';
  if (zeroUpTo(4) && w4 === 0xffff && w5 === 0) return 'IPv4-translated, SIIT';
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) route to the IPv4 address they embed.
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) {
    return describeEmbedded(embeddedV4, 'NAT64');
  }
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 1) return 'NAT64 local-use';
  if (w0 === 0x2002) return describeEmbedded(((w1 << 16) | w2) >>> 0, '6to4');
  if (w0 === 0x100 && w1 === 0 && w2 === 0 && w3 === 0) return 'discard-only';
  if ((w0 & 0xfe00) === 0xfc00) return 'unique-local, fc00::/7';
  if ((w0 & 0xffc0) === 0xfe80) return 'link-local, fe80::/10';
  if ((w0 & 0xffc0) === 0xfec0) return 'site-local, deprecated';
  if ((w0 & 0xff00) === 0xff00) return 'multicast';
  return undefined;
}

function describeEmbedded(v4: number, kind: string): string | undefined {
  const inner = v4Reason(v4);
  return inner && `${kind} ${inner}`;
}

function v4ToInt(s: string): number | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

/** The eight 16-bit words of an address `isIP` accepted as IPv6 (any spelling: `::`, embedded dotted quad). */
function v6ToWords(s: string): number[] {
  let text = s.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const n = v4ToInt(dotted[1]) ?? 0;
    text = `${text.slice(0, -dotted[1].length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const words = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const h = words(head);
  const t = tail === undefined ? [] : words(tail);
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

export interface AssertWebhookUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE: skip the address checks (development and tests). Scheme and credentials still count. */
  allowPrivate?: boolean;
  resolve?: ResolveHost;
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Validates a webhook URL for creation or update; throws AppError validation on `url` with a message the customer
 * can act on. Returns the parsed URL (WHATWG-normalised: `http://2130706433/` becomes `http://127.0.0.1/`, which is
 * why the host is judged only after parsing).
 */
export async function assertWebhookUrl(input: string, options: AssertWebhookUrlOptions = {}): Promise<URL> {
  const refuse = (message: string) => AppError.validation({ url: [message] });
  if (input.length > MAX_WEBHOOK_URL_LENGTH) {
    throw refuse(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw refuse('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refuse(`must use http:// or https:// (not ${url.protocol}//)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw refuse(
      'must not contain a user name or password; authenticate deliveries with the signature instead',
    );
  }
  if (options.allowPrivate) return url;

  const host = hostOf(url);
  const literal = isIP(host) !== 0;
  let addresses: readonly string[];
  if (literal) {
    addresses = [host];
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    throw refuse(`host ${host} is a loopback name; webhooks must reach a public address`);
  } else {
    try {
      addresses = await (options.resolve ?? systemResolveHost)(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw refuse(`host ${host} could not be resolved`);
  }
  for (const address of addresses) {
    const reason = forbiddenAddressReason(address);
    if (reason !== undefined) {
      // A name's addresses are not shown: they would map the network behind Wathiq for whoever asks.
      const what = literal ? 'is not a public address' : 'resolves to an address that is not public';
      throw refuse(`host ${host} ${what} (${reason}); webhooks must reach the internet`);
    }
  }
  return url;
}

/** The host of a parsed URL as an address or a name: IPv6 brackets and a trailing root dot removed. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}
