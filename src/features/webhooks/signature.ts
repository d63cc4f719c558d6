import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures (service-api.md "Signature", docs/product-rules.md §7). Every delivery carries two:
 *   X-Wathiq-Signature = "sha256=" + lowercase hex HMAC-SHA256(key, `${timestamp}.${rawBody}`)
 * where the key is the whole secret string, `whsec_` prefix included, encoded as UTF-8 (the secret is never
 * base64-decoded), and the timestamp is the X-Wathiq-Timestamp header (unix seconds). docs/webhooks.md tells
 * receivers the same recipe; `verifyWebhook` is that recipe.
 *   webhook-signature = "v1," + base64 HMAC-SHA256(key bytes, `${webhook-id}.${webhook-timestamp}.${rawBody}`)
 * the Standard Webhooks scheme, where the key is the secret after `whsec_`, base64-decoded, so the
 * `standardwebhooks` and `svix` verifiers accept our deliveries.
 */

export const SIGNATURE_HEADER = 'x-wathiq-signature';
export const TIMESTAMP_HEADER = 'x-wathiq-timestamp';
export const EVENT_HEADER = 'x-wathiq-event';
export const DELIVERY_HEADER = 'x-wathiq-delivery';
export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';

export const DEFAULT_TOLERANCE_SECONDS = 300;

const SECRET_PREFIX = 'whsec_';

/**
 * `whsec_` + standard base64 (padded) of 32 random bytes (docs/product-rules.md §7): what the prefix means to
 * Standard Webhooks verifiers. Secrets made before were base64url (43 characters, `-` and `_`, no padding); they
 * name the same kind of 32-byte key, and `standardWebhookKey` decodes both.
 */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** A secret as made now (standard base64) or before (base64url); both sign both ways. */
export function isWebhookSecret(value: string): boolean {
  return /^whsec_(?:[A-Za-z0-9+/]{43}=|[A-Za-z0-9_-]{43})$/.test(value);
}

/**
 * The Standard Webhooks key: the secret after `whsec_`, base64-decoded. Node's base64 decoder reads the URL-safe
 * alphabet too, so a secret made in base64url before yields the same 32 bytes it was drawn from.
 */
export function standardWebhookKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new RangeError('A webhook secret must encode a non-empty key');
  return key;
}

/**
 * The secret in the form Standard Webhooks libraries take (`whsec_` + standard base64): unchanged for a secret
 * made now, converted for a base64url one made before. docs/webhooks.md gives receivers the same conversion.
 */
export function standardWebhooksSecret(secret: string): string {
  return SECRET_PREFIX + standardWebhookKey(secret).toString('base64');
}

export interface StandardSignInput extends SignInput {
  /** webhook-id: the same on every attempt of a delivery. */
  id: string;
}

/** The webhook-signature header value for one attempt: `v1,` + base64 HMAC-SHA256 over `id.timestamp.body`. */
export function signStandardWebhook({ secret, id, timestamp, body }: StandardSignInput): string {
  const mac = createHmac('sha256', standardWebhookKey(secret))
    .update(`${id}.${String(timestamp)}.`, 'utf8')
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('base64');
  return `v1,${mac}`;
}

export interface SignInput {
  secret: string;
  /** Unix seconds, exactly as sent in X-Wathiq-Timestamp. */
  timestamp: number | string;
  /** The request body; a string is signed as its UTF-8 bytes, which are the bytes sent. */
  body: string | Uint8Array;
}

/** The X-Wathiq-Signature header value for one attempt. */
export function signWebhook({ secret, timestamp, body }: SignInput): string {
  return `sha256=${hmacHex(secret, String(timestamp), body)}`;
}

function hmacHex(secret: string, timestamp: string, body: string | Uint8Array): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestamp}.`, 'utf8')
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('hex');
}

export type HeaderBag =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

export type VerifyFailure =
  'missing_timestamp' | 'missing_signature' | 'malformed_timestamp' | 'stale_timestamp' | 'bad_signature';

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: VerifyFailure };

export interface VerifyInput {
  secret: string;
  headers: HeaderBag;
  /** The body exactly as received, before any JSON parsing. */
  rawBody: string | Uint8Array;
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Verifies one delivery the way docs/webhooks.md tells receivers to: HMAC over the raw bytes, compared in constant
 * time, and a timestamp no further than `toleranceSeconds` from now in either direction.
 */
export function verifyWebhook({
  secret,
  headers,
  rawBody,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  now = new Date(),
}: VerifyInput): VerifyResult {
  const timestamp = header(headers, TIMESTAMP_HEADER);
  const signature = header(headers, SIGNATURE_HEADER);
  if (timestamp === undefined) return { ok: false, reason: 'missing_timestamp' };
  if (signature === undefined) return { ok: false, reason: 'missing_signature' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'malformed_timestamp' };

  // Check the signature before the clock, so a forged request learns nothing from the answer it gets.
  const expected = Buffer.from(`sha256=${hmacHex(secret, timestamp, rawBody)}`, 'utf8');
  const given = Buffer.from(signature, 'utf8');
  const same = given.length === expected.length && timingSafeEqual(given, expected);
  if (!same) return { ok: false, reason: 'bad_signature' };

  const seconds = Number(timestamp);
  if (Math.abs(now.getTime() / 1000 - seconds) > toleranceSeconds)
    return { ok: false, reason: 'stale_timestamp' };
  return { ok: true, timestamp: seconds };
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const bag = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  // A repeated header is ambiguous: refuse it rather than pick one.
  if (Array.isArray(value)) return value.length === 1 ? (value[0] as string) : undefined;
  return typeof value === 'string' ? value.trim() : undefined;
}
