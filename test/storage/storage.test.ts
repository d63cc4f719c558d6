import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalStorage } from '../../src/storage/local-storage.ts';
import { createS3Storage, ensureS3Bucket, type S3StorageOptions } from '../../src/storage/s3-storage.ts';
import { readObject, type Storage } from '../../src/storage/storage.ts';
import { startLocalS3, type LocalS3 } from '../helpers/s3-server.ts';

async function text(stream: Readable | undefined): Promise<string | undefined> {
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

/** A body that delivers some bytes and then fails, like a client hanging up mid-upload. */
function failingBody(): Readable {
  return new Readable({
    read() {
      this.push(Buffer.alloc(64 * 1024, 1));
      this.destroy(new Error('client went away'));
    },
  });
}

function contract(name: string, make: () => { storage: Storage; leftovers: () => Promise<string[]> }) {
  describe(name, () => {
    it('put streams and reports the size and SHA-256 of what it stored; get and stat read it back', async () => {
      const { storage } = make();
      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      const key = `documents/acc/doc/${randomBytes(4).toString('hex')}.pdf`;
      const chunks = Array.from({ length: 10 }, (_, i) => bytes.subarray(i * 330_000, (i + 1) * 330_000));
      chunks.push(bytes.subarray(3_300_000));
      const stored = await storage.put(key, Readable.from(chunks), { contentType: 'application/pdf' });
      expect(stored).toEqual({
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      });
      expect(await storage.stat(key)).toEqual({ size: bytes.length });
      expect((await readObject(storage, key))!.equals(bytes)).toBe(true);
      const rangeBytes = await readObject({ ...storage, get: () => storage.getRange(key, 10, 19) }, key);
      expect(rangeBytes!.equals(bytes.subarray(10, 20))).toBe(true);
    });

    it('put replaces; delete removes and is idempotent; a missing key reads as undefined', async () => {
      const { storage } = make();
      const key = 'files/x/final.pdf';
      await storage.put(key, Readable.from([Buffer.from('one')]));
      await storage.put(key, Readable.from([Buffer.from('two')]));
      expect(await text(await storage.get(key))).toBe('two');
      await storage.delete(key);
      await storage.delete(key);
      expect(await storage.get(key)).toBeUndefined();
      expect(await storage.getRange(key, 0, 1)).toBeUndefined();
      expect(await storage.stat(key)).toBeUndefined();
    });

    it('a body that fails leaves nothing behind', async () => {
      const { storage, leftovers } = make();
      const key = 'documents/acc/doc/broken.pdf';
      await expect(storage.put(key, failingBody())).rejects.toThrow('client went away');
      expect(await storage.stat(key)).toBeUndefined();
      expect(await leftovers()).toEqual([]);
    });

    it('refuses keys that could escape', async () => {
      const { storage } = make();
      for (const key of ['../etc/passwd', '/abs/path', 'a/../../b', 'a//b', '', 'a/./b', 'sp ace']) {
        await expect(storage.put(key, Readable.from([Buffer.from('x')]))).rejects.toThrow(
          'Invalid storage key',
        );
      }
    });
  });
}

let localRoot: string;
let spoolDir: string;
let s3: LocalS3;
let s3Options: S3StorageOptions;

beforeAll(async () => {
  localRoot = await mkdtemp(path.join(os.tmpdir(), 'wathiq-storage-'));
  spoolDir = path.join(localRoot, 's3-spool');
  s3 = await startLocalS3();
  s3Options = {
    bucket: 'wathiq-test',
    region: 'us-east-1',
    endpoint: s3.endpoint,
    accessKeyId: 'test',
    secretAccessKey: 'test',
    forcePathStyle: true,
    prefix: 'deployment-a',
    spoolDir,
  };
  await ensureS3Bucket(s3Options);
  await ensureS3Bucket(s3Options); // idempotent
}, 60_000);
afterAll(async () => {
  await s3?.stop();
  await rm(localRoot, { recursive: true, force: true });
});

const list = (dir: string) => readdir(dir).catch(() => [] as string[]);

contract('local filesystem storage', () => ({
  storage: createLocalStorage(path.join(localRoot, 'files')),
  leftovers: async () => [
    ...(await list(path.join(localRoot, 'files', '.tmp'))),
    ...(await list(path.join(localRoot, 'files', 'documents', 'acc', 'doc'))).filter(
      (f) => f === 'broken.pdf',
    ),
  ],
}));

contract('S3-compatible storage (moto)', () => ({
  storage: createS3Storage(s3Options),
  leftovers: () => list(spoolDir),
}));

describe('S3 specifics', () => {
  it('keys live under the configured prefix', async () => {
    const storage = createS3Storage(s3Options);
    await storage.put('a/b.txt', Readable.from([Buffer.from('hello')]));
    const unprefixed = createS3Storage({ ...s3Options, prefix: undefined });
    expect(await text(await unprefixed.get('deployment-a/a/b.txt'))).toBe('hello');
    expect(await unprefixed.stat('a/b.txt')).toBeUndefined();
  });
});
