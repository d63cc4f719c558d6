import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createSecretBox,
  parseEncryptionKeys,
  secretBoxFromSettings,
  SecretBoxError,
} from '../../src/auth/secret-box.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

const key = (id: string) => ({ id, key: randomBytes(32) });

describe('secret box', () => {
  const scratch: string[] = [];
  afterEach(async () => {
    for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('opens what it sealed, and the sealed text holds neither the secret nor the key', () => {
    const k1 = key('k1');
    const box = createSecretBox([k1]);
    const sealed = box.seal('whsec_top-secret', 'webhooks.secret:1');
    expect(sealed).toMatch(/^wqs1\.k1\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('top-secret');
    expect(sealed).not.toContain(k1.key.toString('base64url'));
    expect(box.open(sealed, 'webhooks.secret:1')).toBe('whsec_top-secret');
    // A fresh IV each time: the same secret never seals to the same text.
    expect(box.seal('whsec_top-secret', 'webhooks.secret:1')).not.toBe(sealed);
  });

  it('holds its own copy of each key: the buffers it was given may be wiped afterwards', () => {
    const k1 = key('k1');
    const k0 = key('k0');
    const copies = [Buffer.from(k1.key), Buffer.from(k0.key)];
    const box = createSecretBox([k1, k0]);
    const sealedBefore = box.seal('secret', 'ctx');
    const sealedWithOld = createSecretBox([{ id: 'k0', key: copies[1]! }]).seal('old', 'ctx');
    k1.key.fill(0);
    k0.key.fill(0);
    expect(box.open(sealedBefore, 'ctx')).toBe('secret');
    expect(box.open(sealedWithOld, 'ctx')).toBe('old');
    // What it seals after the wipe is sealed with the key as given, not with zeros.
    const sealedAfter = box.seal('later', 'ctx');
    expect(createSecretBox([{ id: 'k1', key: copies[0]! }]).open(sealedAfter, 'ctx')).toBe('later');
  });

  it('refuses a value moved to another context, tampered with, truncated or not sealed at all', () => {
    const box = createSecretBox([key('k1')]);
    const sealed = box.seal('secret', 'webhooks.secret:1');
    expect(() => box.open(sealed, 'webhooks.secret:2')).toThrow(SecretBoxError);
    const payload = Buffer.from(sealed.split('.')[2]!, 'base64url');
    payload[14] = payload[14]! ^ 1;
    expect(() => box.open(`wqs1.k1.${payload.toString('base64url')}`, 'webhooks.secret:1')).toThrow(
      /authentication/,
    );
    expect(() => box.open('wqs1.k1.AAAA', 'webhooks.secret:1')).toThrow(/truncated/);
    expect(() => box.open('secret', 'webhooks.secret:1')).toThrow(/not a sealed value/);
  });

  it('rotates: the new key seals, the old one still opens, and a box without the old key says which it needs', () => {
    const k1 = key('k1');
    const k2 = key('k2');
    const old = createSecretBox([k1]).seal('secret', 'ctx');
    const rotated = createSecretBox([k2, k1]);
    expect(rotated.currentKeyId).toBe('k2');
    expect(rotated.open(old, 'ctx')).toBe('secret');
    expect(rotated.keyIdOf(old)).toBe('k1');
    const resealed = rotated.seal(rotated.open(old, 'ctx'), 'ctx');
    expect(rotated.keyIdOf(resealed)).toBe('k2');
    const retired = createSecretBox([k2]);
    expect(retired.open(resealed, 'ctx')).toBe('secret');
    expect(() => retired.open(old, 'ctx')).toThrow(/key "k1"/);
  });

  it('parses ENCRYPTION_KEYS and names each bad entry', () => {
    const good = randomBytes(32).toString('base64');
    expect(parseEncryptionKeys(`k2:${good}, k1:${good}`).keys.map((k) => k.id)).toEqual(['k2', 'k1']);
    const { issues } = parseEncryptionKeys(
      `k1:${good},k1:${good},:${good},bad id:${good},k3:c2hvcnQ=,k4:${'!'.repeat(44)}`,
    );
    expect(issues).toEqual([
      'key id "k1" is given twice',
      expect.stringContaining('entry 3'),
      expect.stringContaining('entry 4'),
      expect.stringContaining('key "k3" is not 32 bytes'),
      expect.stringContaining('key "k4" is not 32 bytes'),
    ]);
    expect(() => loadConfig({ ENCRYPTION_KEYS: 'k1:c2hvcnQ=' })).toThrow(ConfigError);
    expect(loadConfig({ ENCRYPTION_KEYS: `k1:${good}` }).encryption.keys).toHaveLength(1);
  });

  it('is required in production, and the development key is made once, private, and reused', async () => {
    expect(() => loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://x.example' })).toThrow(
      /ENCRYPTION_KEYS: required when NODE_ENV=production/,
    );
    const dir = await mkdtemp(path.join(os.tmpdir(), 'secret-box-'));
    scratch.push(dir);
    const devKeyPath = path.join(dir, 'keys', 'encryption.key');
    const first = secretBoxFromSettings({ keys: [], devKeyPath });
    const sealed = first.seal('secret', 'ctx');
    expect((await stat(devKeyPath)).mode & 0o777).toBe(0o600);
    const again = secretBoxFromSettings({ keys: [], devKeyPath });
    expect(again.currentKeyId).toBe(first.currentKeyId);
    expect(again.open(sealed, 'ctx')).toBe('secret');
    await writeFile(devKeyPath, 'garbage');
    expect(() => secretBoxFromSettings({ keys: [], devKeyPath })).toThrow(SecretBoxError);
    expect(await readFile(devKeyPath, 'utf8')).toBe('garbage');
  });
});
