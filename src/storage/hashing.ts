import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** A pass-through that counts and hashes what flows through it, so a single read of the stream does both. */
export class HashingCounter extends Transform {
  private readonly hash = createHash('sha256');
  size = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    callback(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
