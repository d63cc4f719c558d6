import { AppError } from '../errors.ts';
import { validatePng } from '../images/png-inflate.ts';
import { type PngLimits, PngError } from '../images/png.ts';
import type { PageStrings } from './strings.ts';

/** Largest signature or stamp image accepted from the approval page. */
export const MAX_IMAGE_BYTES = 2 * 1024 * 1024;

export type ImageField = 'signature_png' | 'stamp_png';

/**
 * Decodes `data:image/png;base64,...` into PNG bytes and checks the image completely (src/images/png.ts): the
 * final PDF embeds these bytes once every approver has acted, so anything wrong with them is said here, where
 * the approver can still draw or choose the image again — in the page's language (422).
 */
export async function readImageField(
  field: ImageField,
  value: unknown,
  input: { strings: PageStrings; limits: PngLimits },
): Promise<Buffer> {
  const said = input.strings.images[field === 'signature_png' ? 'signature' : 'stamp'];
  const fail = (message: string) => AppError.validation({ [field]: [message] });
  const match = typeof value === 'string' ? /^data:image\/png;base64,([A-Za-z0-9+/=\s]+)$/.exec(value) : null;
  if (!match?.[1]) throw fail(said.notPng);
  const bytes = Buffer.from(match[1], 'base64');
  if (bytes.length > MAX_IMAGE_BYTES) throw fail(said.tooManyBytes(MAX_IMAGE_BYTES / 1024 / 1024));
  try {
    await validatePng(bytes, input.limits);
  } catch (err) {
    if (!(err instanceof PngError)) throw err;
    if (err.problem === 'not_png') throw fail(said.notPng);
    if (err.problem === 'too_large') throw fail(said.tooLarge(input.limits.maxSidePx));
    throw fail(said.damaged);
  }
  return bytes;
}
