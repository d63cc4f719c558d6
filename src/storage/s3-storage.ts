import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { AwsV4Signer } from 'aws4fetch';
import { request, type Dispatcher } from 'undici';
import { HashingCounter } from './hashing.ts';
import { writeNewFile } from './write-new-file.ts';
import type { S3Settings } from '../config/storage.ts';
import { assertKey, type ObjectStat, type Storage, type StorageBody, type StoredObject } from './storage.ts';

export interface S3StorageOptions extends S3Settings {
  timeoutMs?: number;
}

export class StorageError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

const PUT_ATTEMPTS = 3;

/**
 * An S3-compatible bucket, spoken to with plain signed HTTP (aws4fetch's SigV4 signer over undici) rather than
 * the whole AWS SDK. A put first spools the stream to a local temp file while hashing it, then uploads it with its
 * length and its SHA-256 as `x-amz-content-sha256`, which the server verifies: the object is either complete and
 * intact or absent.
 */
/** Signs one S3 request (SigV4) with the bucket's credentials; the headers to send come back as a plain record. */
async function signS3(
  options: S3Settings,
  req: { method: string; url: string; headers?: Record<string, string>; body?: string },
): Promise<{ url: URL; headers: Record<string, string> }> {
  const signed = await new AwsV4Signer({
    ...req,
    accessKeyId: options.accessKeyId,
    secretAccessKey: options.secretAccessKey,
    sessionToken: options.sessionToken,
    service: 's3',
    region: options.region,
  }).sign();
  const headers: Record<string, string> = {};
  signed.headers.forEach((value, name) => (headers[name] = value));
  return { url: signed.url, headers };
}

export function createS3Storage(options: S3StorageOptions): Storage {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const base = new URL(options.endpoint ?? `https://s3.${options.region}.amazonaws.com`);
  const prefix = options.prefix ? options.prefix.replace(/^\/+|\/+$/g, '') + '/' : '';

  const urlOf = (key: string): string => {
    assertKey(key);
    const encoded = (prefix + key).split('/').map(encodeURIComponent).join('/');
    const basePath = base.pathname.replace(/\/+$/, '');
    return options.forcePathStyle
      ? `${base.protocol}//${base.host}${basePath}/${encodeURIComponent(options.bucket)}/${encoded}`
      : `${base.protocol}//${options.bucket}.${base.host}${basePath}/${encoded}`;
  };

  const send = async (
    method: Dispatcher.HttpMethod,
    url: string,
    headers: Record<string, string> = {},
    body?: Readable,
  ): Promise<Dispatcher.ResponseData> => {
    const signed = await signS3(options, { method, url, headers });
    const outgoing = signed.headers;
    if (headers['content-length'] !== undefined) outgoing['content-length'] = headers['content-length'];
    return request(signed.url, {
      method,
      headers: outgoing,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  };

  const failure = async (what: string, res: Dispatcher.ResponseData): Promise<StorageError> => {
    const text = await res.body.text().catch(() => '');
    const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
    return new StorageError(
      `S3 ${what} failed: HTTP ${res.statusCode}${code ? ` ${code}` : ''}`,
      res.statusCode,
    );
  };

  const read = async (key: string, headers: Record<string, string>): Promise<Readable | undefined> => {
    const res = await send('GET', urlOf(key), headers);
    if (res.statusCode === 404) {
      await res.body.dump();
      return undefined;
    }
    if (res.statusCode !== 200 && res.statusCode !== 206) throw await failure(`GET ${key}`, res);
    return res.body;
  };

  return {
    kind: 's3',

    async put(key: string, body: StorageBody, putOptions = {}): Promise<StoredObject> {
      const url = urlOf(key);
      await mkdir(options.spoolDir, { recursive: true });
      const spool = path.join(options.spoolDir, `s3-put-${randomUUID()}`);
      const counter = new HashingCounter();
      try {
        await writeNewFile(spool, body, counter);
        const stored = { size: counter.size, sha256: counter.digest() };
        for (let attempt = 1; ; attempt++) {
          const res = await send(
            'PUT',
            url,
            {
              'content-type': putOptions.contentType ?? 'application/octet-stream',
              'content-length': String(stored.size),
              'x-amz-content-sha256': stored.sha256,
            },
            createReadStream(spool),
          ).catch((err: unknown) => {
            if (attempt >= PUT_ATTEMPTS) throw err;
            return undefined;
          });
          if (res && res.statusCode >= 200 && res.statusCode < 300) {
            await res.body.dump();
            return stored;
          }
          const retriable = !res || res.statusCode >= 500 || res.statusCode === 429;
          if (!retriable || attempt >= PUT_ATTEMPTS) {
            throw res ? await failure(`PUT ${key}`, res) : new StorageError(`S3 PUT ${key} failed`);
          }
          if (res) await res.body.dump();
          await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
        }
      } finally {
        await rm(spool, { force: true });
      }
    },

    get: (key) => read(key, {}),

    getRange: (key, start, end) => read(key, { range: `bytes=${start}-${end}` }),

    async stat(key: string): Promise<ObjectStat | undefined> {
      const res = await send('HEAD', urlOf(key));
      await res.body.dump();
      if (res.statusCode === 404) return undefined;
      if (res.statusCode !== 200) throw new StorageError(`S3 HEAD ${key} failed: HTTP ${res.statusCode}`);
      return { size: Number(res.headers['content-length'] ?? 0) };
    },

    async delete(key: string): Promise<void> {
      const res = await send('DELETE', urlOf(key));
      if (res.statusCode === 404 || (res.statusCode >= 200 && res.statusCode < 300)) {
        await res.body.dump();
        return;
      }
      throw await failure(`DELETE ${key}`, res);
    },
  };
}

/** Creates the bucket when it does not exist yet (development against MinIO or moto, and the tests). */
export async function ensureS3Bucket(options: S3StorageOptions): Promise<void> {
  const base = new URL(options.endpoint ?? `https://s3.${options.region}.amazonaws.com`);
  const url = options.forcePathStyle
    ? `${base.protocol}//${base.host}/${encodeURIComponent(options.bucket)}`
    : `${base.protocol}//${options.bucket}.${base.host}/`;
  const body =
    options.region === 'us-east-1'
      ? ''
      : `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>${options.region}</LocationConstraint></CreateBucketConfiguration>`;
  const signed = await signS3(options, { method: 'PUT', url, body });
  const res = await request(signed.url, { method: 'PUT', headers: signed.headers, body });
  const text = await res.body.text();
  if (res.statusCode >= 300 && !/BucketAlreadyOwnedByYou|BucketAlreadyExists/.test(text)) {
    throw new StorageError(
      `S3 create bucket ${options.bucket} failed: HTTP ${res.statusCode}`,
      res.statusCode,
    );
  }
}
