import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiSecret, parseBearerCredentials } from '../../src/auth/api-key-format.ts';
import { hashPassword, verifyPassword } from '../../src/auth/passwords.ts';

describe('API key format', () => {
  it('generates wq_ keys with 24 base62 characters and 32-byte base64url secrets', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^wq_[A-Za-z0-9]{24}$/);
    expect(Buffer.from(a.secret, 'base64url')).toHaveLength(32);
    expect(a.secretHash).toBe(hashApiSecret(a.secret));
    expect(a.secretHash).not.toContain(a.secret);
    expect(a.key).not.toBe(b.key);
    expect(a.secret).not.toBe(b.secret);
  });

  it('parses Bearer KEY:SECRET and nothing else', () => {
    const { key, secret } = generateApiKey();
    expect(parseBearerCredentials(`Bearer ${key}:${secret}`)).toEqual({ key, secret });
    expect(parseBearerCredentials(`bearer ${key}:${secret}`)).toEqual({ key, secret });
    for (const bad of [
      undefined,
      '',
      'Bearer',
      `Basic ${key}:${secret}`,
      `Bearer ${key}`,
      `Bearer ${key}:`,
      `Bearer :${secret}`,
      `Bearer ${key}:${secret}:extra`,
      `Bearer ${key}:${secret} trailing`,
      `Bearer wq_short:${secret}`,
      `Bearer ${key}:${secret.slice(1)}`,
    ]) {
      expect(parseBearerCredentials(bad), String(bad)).toBeUndefined();
    }
  });
});

describe('passwords', () => {
  it('hashes with scrypt and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', hash)).toBe(false);
    expect(await verifyPassword('anything', 'not-a-hash')).toBe(false);
  });
});
