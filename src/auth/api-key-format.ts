import { randomBase62, randomToken, sha256Hex } from './tokens.ts';

export const API_SCOPES = ['documents:read', 'documents:write', 'webhooks:read', 'webhooks:write'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

const KEY_PATTERN = /^wq_[A-Za-z0-9]{24}$/;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface GeneratedApiKey {
  key: string;
  secret: string;
  secretHash: string;
}

/**
 * Key `wq_` + 24 base62 characters (public, shown in the dashboard); secret 32 random bytes base64url (shown
 * once). The secret carries 256 bits of entropy, so a single SHA-256 is a sufficient one-way hash: a slow
 * password hash would only add latency to every request.
 */
export function generateApiKey(): GeneratedApiKey {
  const secret = randomToken(32);
  return { key: `wq_${randomBase62(24)}`, secret, secretHash: hashApiSecret(secret) };
}

export function hashApiSecret(secret: string): string {
  return sha256Hex(secret);
}

export interface ParsedCredentials {
  key: string;
  secret: string;
}

/** Parses `Authorization: Bearer KEY:SECRET`; anything else is undefined. */
export function parseBearerCredentials(header: string | undefined): ParsedCredentials | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const token = match[1];
  const colon = token.indexOf(':');
  if (colon < 0) return undefined;
  const key = token.slice(0, colon);
  const secret = token.slice(colon + 1);
  if (!KEY_PATTERN.test(key) || !SECRET_PATTERN.test(secret)) return undefined;
  return { key, secret };
}
