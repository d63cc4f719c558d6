import path from 'node:path';
import { optionalString } from './fields.ts';
import { defineSlice } from './slice.ts';

/** One AES-256 key, named so a sealed value says which key sealed it. */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** Where the keys come from: `ENCRYPTION_KEYS`, or (outside production) one key kept in `devKeyPath`. */
export interface EncryptionSettings {
  keys: readonly EncryptionKey[];
  devKeyPath: string;
}

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Reads `id:base64key[,id:base64key…]` (the form of `ENCRYPTION_KEYS` and of the development key file). Returns
 * the keys, or the problems found, each naming the entry.
 */
export function parseEncryptionKeys(text: string): { keys: EncryptionKey[]; issues: string[] } {
  const keys: EncryptionKey[] = [];
  const issues: string[] = [];
  const seen = new Set<string>();
  for (const [i, raw] of text.split(',').entries()) {
    const entry = raw.trim();
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    const encoded = colon > 0 ? entry.slice(colon + 1) : '';
    if (!KEY_ID_PATTERN.test(id)) {
      issues.push(`entry ${i + 1} is not "<id>:<base64 key>" with an id of [A-Za-z0-9_-]{1,32}`);
      continue;
    }
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
    if (key.length !== 32) {
      issues.push(`key "${id}" is not 32 bytes of base64 (openssl rand -base64 32 makes one)`);
      continue;
    }
    if (seen.has(id)) {
      issues.push(`key id "${id}" is given twice`);
      continue;
    }
    seen.add(id);
    keys.push({ id, key });
  }
  return { keys, issues };
}

export interface EncryptionConfig {
  /**
   * AES-256-GCM keys for the secrets Wathiq stores and must read back (`auth/secret-box.ts`); the first seals.
   * No keys (allowed outside production only): one is created once and kept at `devKeyPath`.
   */
  encryption: EncryptionSettings;
}

export const encryptionSlice = defineSlice({
  title: 'Secrets at rest',
  about:
    'Tokens and secrets are kept hashed, or sealed with these keys when Wathiq must read them back (docs/security.md#secrets-at-rest; rotation: `npm run cli -- secrets:reseal`).',
  env: {
    ENCRYPTION_KEYS: optionalString.describe(
      '"id:base64key[,id:base64key…]", 32-byte AES-256-GCM keys (openssl rand -base64 32); the first seals, all open (rotation: add the new key first)',
    ),
  },
  derivedDefaults: {
    ENCRYPTION_KEYS: 'one key kept in DATA_DIR/keys/encryption.key (refused in production)',
  },
  checks: {
    production: (e, ctx) =>
      ctx.nodeEnv === 'production' && e.ENCRYPTION_KEYS === undefined
        ? [
            'ENCRYPTION_KEYS: required when NODE_ENV=production ("<id>:<32 bytes base64>", e.g. k1:$(openssl rand -base64 32)); the development key file is refused',
          ]
        : [],
    'encryption-keys': (e) =>
      e.ENCRYPTION_KEYS === undefined
        ? []
        : parseEncryptionKeys(e.ENCRYPTION_KEYS).issues.map((issue) => `ENCRYPTION_KEYS: ${issue}`),
  },
  build: (e, ctx): EncryptionConfig => ({
    encryption: {
      keys: e.ENCRYPTION_KEYS === undefined ? [] : parseEncryptionKeys(e.ENCRYPTION_KEYS).keys,
      devKeyPath: path.join(ctx.dataDir, 'keys', 'encryption.key'),
    },
  }),
});
