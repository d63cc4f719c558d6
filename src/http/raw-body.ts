import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.ts';
import { withoutPrototypes } from './untrusted.ts';

/** The request body as the exact bytes received (for signature checks), refused past `limit` bytes. */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    throw new AppError('payload_too_large', 'Request body too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      req.destroy();
      throw new AppError('payload_too_large', 'Request body too large');
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/**
 * Parses JSON from raw bytes; malformed JSON is the documented 400. Objects come back without prototypes (the keys
 * are the sender's).
 */
export function parseJson(raw: Buffer): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new AppError('malformed_json', 'Malformed JSON in request body');
  }
  return withoutPrototypes(parsed);
}
