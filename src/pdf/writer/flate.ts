import zlib from 'node:zlib';
import type { PDFContext, PDFRawStream } from 'pdf-lib';

/** pdf-lib's LiteralObject, which it does not export. */
type StreamDict = NonNullable<Parameters<PDFContext['stream']>[1]>;

/**
 * A FlateDecode stream compressed with Node's zlib (pdf-lib's own flateStream runs pako in JavaScript, several
 * times slower on font programs). zlib output is the same for the same input, so documents stay deterministic.
 */
export function flateStream(
  context: PDFContext,
  data: string | Uint8Array,
  dict: StreamDict = {},
): PDFRawStream {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  return context.stream(zlib.deflateSync(bytes, { level: 6 }), { ...dict, Filter: 'FlateDecode' });
}
