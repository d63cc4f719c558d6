import { AppError } from '../errors.ts';

/** Largest signature or stamp image accepted from the approval page. */
export const MAX_IMAGE_BYTES = 2 * 1024 * 1024;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MAX_SIDE = 4000;

/**
 * Decodes `data:image/png;base64,...` into PNG bytes, refusing anything that is not a sane PNG: the final PDF
 * embeds these bytes, so they are checked here, where the approver can still fix them.
 */
export function decodePngDataUrl(field: string, value: unknown): Buffer {
  const fail = (message: string) => AppError.validation({ [field]: [message] });
  if (typeof value !== 'string') throw fail('must be a data URL of a PNG image (data:image/png;base64,...)');
  const match = /^data:image\/png;base64,([A-Za-z0-9+/=\s]+)$/.exec(value);
  if (!match?.[1]) throw fail('must be a data URL of a PNG image (data:image/png;base64,...)');
  const bytes = Buffer.from(match[1], 'base64');
  if (bytes.length > MAX_IMAGE_BYTES) throw fail(`must be at most ${MAX_IMAGE_BYTES / 1024 / 1024} MB`);
  if (
    bytes.length < 33 ||
    !bytes.subarray(0, 8).equals(PNG_MAGIC) ||
    bytes.toString('latin1', 12, 16) !== 'IHDR'
  ) {
    throw fail('is not a PNG image');
  }
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  if (width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE) {
    throw fail(`must be between 1×1 and ${MAX_SIDE}×${MAX_SIDE} pixels`);
  }
  return bytes;
}
