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

/** The bucket's addressing and signed requests, shared by the storage's operations. */
interface S3Client {
  options: S3StorageOptions;
  urlOf(key: string): string;
  send(
    method: Dispatcher.HttpMethod,
    url: string,
    headers?: Record<string, string>,
    body?: Readable,
  ): Promise<Dispatcher.ResponseData>;
}

function s3Client(options: S3StorageOptions): S3Client {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const base = new URL(options.endpoint ?? `https://s3.${options.region}.amazonaws.com`);
  const prefix = options.prefix ? options.prefix.replace(/^\/+|\/+$/g, '') + '/' : '';
  return {
    options,
    urlOf(key) {
      assertKey(key);
      const encoded = (prefix + key).split('/').map(encodeURIComponent).join('/');
      const basePath = base.pathname.replace(/\/+$/, '');
      return options.forcePathStyle
        ? `${base.protocol}//${base.host}${basePath}/${encodeURIComponent(options.bucket)}/${encoded}`
        : `${base.protocol}//${options.bucket}.${base.host}${basePath}/${encoded}`;
    },
    async send(method, url, headers = {}, body) {
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
    },
  };
}

/** The error of a refused request, naming S3's error code from the answer's XML when it has one. */
async function failure(what: string, res: Dispatcher.ResponseData): Promise<StorageError> {
  const text = await res.body.text().catch(() => '');
  const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
  return new StorageError(
    `S3 ${what} failed: HTTP ${res.statusCode}${code ? ` ${code}` : ''}`,
    res.statusCode,
  );
}

/**
 * An S3-compatible bucket, spoken to with plain signed HTTP (aws4fetch's SigV4 signer over undici) rather than
 * the whole AWS SDK. A put first spools the stream to a local temp file while hashing it, then uploads it with its
 * length and its SHA-256 as `x-amz-content-sha256`, which the server verifies: the object is either complete and
 * intact or absent.
 */
export function createS3Storage(options: S3StorageOptions): Storage {
  const client = s3Client(options);
  return {
    kind: 's3',
    put: (key, body, putOptions = {}) => putObject(client, key, body, putOptions),
    get: (key) => readObject(client, key, {}),
    getRange: (key, start, end) => readObject(client, key, { range: `bytes=${start}-${end}` }),
    stat: (key) => statObject(client, key),
    delete: (key) => deleteObject(client, key),
  };
}

/** Spools and hashes the body, then uploads it; a 5xx, a 429 or a failed connection is tried again. */
async function putObject(
  client: S3Client,
  key: string,
  body: StorageBody,
  putOptions: { contentType?: string },
): Promise<StoredObject> {
  const url = client.urlOf(key);
  const { spoolDir } = client.options;
  await mkdir(spoolDir, { recursive: true });
  const spool = path.join(spoolDir, `s3-put-${randomUUID()}`);
  const counter = new HashingCounter();
  try {
    await writeNewFile(spool, body, counter);
    const stored = { size: counter.size, sha256: counter.digest() };
    for (let attempt = 1; ; attempt++) {
      const res = await client
        .send(
          'PUT',
          url,
          {
            'content-type': putOptions.contentType ?? 'application/octet-stream',
            'content-length': String(stored.size),
            'x-amz-content-sha256': stored.sha256,
          },
          createReadStream(spool),
        )
        .catch((err: unknown) => {
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
}

async function readObject(
  client: S3Client,
  key: string,
  headers: Record<string, string>,
): Promise<Readable | undefined> {
  const res = await client.send('GET', client.urlOf(key), headers);
  if (res.statusCode === 404) {
    await res.body.dump();
    return undefined;
  }
  if (res.statusCode !== 200 && res.statusCode !== 206) throw await failure(`GET ${key}`, res);
  return res.body;
}

async function statObject(client: S3Client, key: string): Promise<ObjectStat | undefined> {
  const res = await client.send('HEAD', client.urlOf(key));
  await res.body.dump();
  if (res.statusCode === 404) return undefined;
  if (res.statusCode !== 200) throw new StorageError(`S3 HEAD ${key} failed: HTTP ${res.statusCode}`);
  return { size: Number(res.headers['content-length'] ?? 0) };
}

async function deleteObject(client: S3Client, key: string): Promise<void> {
  const res = await client.send('DELETE', client.urlOf(key));
  if (res.statusCode === 404 || (res.statusCode >= 200 && res.statusCode < 300)) {
    await res.body.dump();
    return;
  }
  throw await failure(`DELETE ${key}`, res);
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
