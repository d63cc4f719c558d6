import type { Readable } from 'node:stream';

/** What `put` learned while streaming: the byte count and the SHA-256 (lowercase hex) of exactly what was stored. */
export interface StoredObject {
  size: number;
  sha256: string;
}

export interface ObjectStat {
  size: number;
}

export type StorageBody = Readable | AsyncIterable<Uint8Array>;

/**
 * Where files live: original uploads, signature images, final signed PDFs. One small interface, two drivers
 * (local filesystem, S3-compatible bucket), so the API, the workflow activities and the public file route share it.
 *
 * Keys are relative paths of safe characters (`documents/<account>/<document>/<uuid>.pdf`); see `assertKey`.
 * A `put` is all-or-nothing: when the body stream fails (a size limit, a client that hangs up) nothing is left
 * under the key.
 */
export interface Storage {
  readonly kind: 'local' | 's3';
  /** Streams `body` to `key`, replacing what was there; size and SHA-256 are computed on the way through. */
  put(key: string, body: StorageBody, options?: { contentType?: string }): Promise<StoredObject>;
  /** The whole object as a stream, or undefined when there is no such object. */
  get(key: string): Promise<Readable | undefined>;
  /** Bytes `start`..`end` inclusive (HTTP Range semantics), or undefined when there is no such object. */
  getRange(key: string, start: number, end: number): Promise<Readable | undefined>;
  stat(key: string): Promise<ObjectStat | undefined>;
  /** Removes the object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
}

const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/** Keys come from our own code, but a traversal (`..`, absolute paths) must be impossible whatever the caller does. */
export function assertKey(key: string): void {
  if (key.length === 0 || key.length > 512 || !KEY_PATTERN.test(key) || key.split('/').includes('..')) {
    throw new Error(`Invalid storage key: ${JSON.stringify(key)}`);
  }
}

/** Reads a whole object into memory (small objects only: signature images, a PDF for the finalizer). */
export async function readObject(storage: Storage, key: string): Promise<Buffer | undefined> {
  const stream = await storage.get(key);
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
