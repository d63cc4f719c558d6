import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  KEY_ID_PATTERN,
  parseEncryptionKeys,
  type EncryptionKey,
  type EncryptionSettings,
} from '../config/encryption.ts';

export { parseEncryptionKeys, type EncryptionKey, type EncryptionSettings } from '../config/encryption.ts';

/**
 * Seals the secrets Wathiq must read back (webhook signing secrets, the read-back copy of a link token, TOTP
 * secrets, a CSC client secret) with AES-256-GCM. The first key seals; every key opens, so a new key goes first
 * and the old one stays until everything has been sealed again (`keyIdOf` tells which values still need it).
 *
 * `context` is bound into the ciphertext as additional data (say `webhooks.secret:<id>`): a sealed value copied
 * into another row or column does not open there.
 */
export interface SecretBox {
  readonly currentKeyId: string;
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
  /** The id of the key that sealed `sealed` (no decryption). */
  keyIdOf(sealed: string): string;
}

/** `wqs1.<key id>.<base64url(iv ‖ ciphertext ‖ tag)>`: text, so it fits any text column and any log-free dump. */
const FORMAT = 'wqs1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

export function createSecretBox(keys: readonly EncryptionKey[]): SecretBox {
  const current = keys[0];
  if (!current) throw new SecretBoxError('at least one encryption key is needed');
  // Key objects made once hold their own copy of each key, and spare every seal and open the key's preparation:
  // on Node 24 a Buffer key makes an AES-GCM open cost 17 µs instead of 4, and every GET /documents/{id} of an
  // approved document opens its verification token.
  const byId = new Map<string, KeyObject>();
  for (const k of keys) {
    if (!KEY_ID_PATTERN.test(k.id))
      throw new SecretBoxError(`encryption key id "${k.id}" is not [A-Za-z0-9_-]{1,32}`);
    if (k.key.length !== 32) throw new SecretBoxError(`encryption key "${k.id}" is not 32 bytes`);
    if (byId.has(k.id)) throw new SecretBoxError(`encryption key id "${k.id}" is given twice`);
    byId.set(k.id, createSecretKey(k.key));
  }
  const currentKey = byId.get(current.id)!;

  const parse = (sealed: string) => {
    const parts = sealed.split('.');
    if (parts.length !== 3 || parts[0] !== FORMAT || !parts[1] || !parts[2])
      throw new SecretBoxError('not a sealed value');
    return { keyId: parts[1], payload: Buffer.from(parts[2], 'base64url') };
  };

  return {
    currentKeyId: current.id,
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const payload = Buffer.concat([iv, body, cipher.getAuthTag()]);
      return `${FORMAT}.${current.id}.${payload.toString('base64url')}`;
    },
    open(sealed, context) {
      const { keyId, payload } = parse(sealed);
      const key = byId.get(keyId);
      if (!key)
        throw new SecretBoxError(
          `sealed with key "${keyId}", which ENCRYPTION_KEYS no longer lists (keep it until everything is resealed)`,
        );
      if (payload.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('sealed value is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, payload.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(payload.subarray(payload.length - TAG_BYTES));
      try {
        return Buffer.concat([
          decipher.update(payload.subarray(IV_BYTES, payload.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new SecretBoxError(
          'sealed value failed authentication (tampered, or sealed for another context)',
        );
      }
    },
    keyIdOf(sealed) {
      return parse(sealed).keyId;
    },
  };
}

/**
 * The box from configuration. With no keys configured (only allowed outside production), one key is created
 * the first time and kept in `devKeyPath`, so `npm start` needs no setup and restarts open what was sealed.
 * Another process creating the same file at the same moment is fine: the file is written once (`wx`) and read.
 */
export function secretBoxFromSettings(settings: EncryptionSettings): SecretBox {
  if (settings.keys.length > 0) return createSecretBox(settings.keys);
  mkdirSync(path.dirname(settings.devKeyPath), { recursive: true, mode: 0o700 });
  try {
    const line = `dev-${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}\n`;
    writeFileSync(settings.devKeyPath, line, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const { keys, issues } = parseEncryptionKeys(readFileSync(settings.devKeyPath, 'utf8'));
  if (issues.length > 0 || keys.length === 0)
    throw new SecretBoxError(`${settings.devKeyPath}: ${issues.join('; ') || 'no key'}`);
  return createSecretBox(keys);
}
