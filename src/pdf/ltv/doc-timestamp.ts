import { BYTE_RANGE_PLACEHOLDER, addSignatureField, fillByteRange, fillContents } from '../sign/sign-pdf.ts';
import { fetchTimestampToken } from '../sign/timestamp.ts';
import { openRevision } from '../writer/pdf-revision.ts';
import { writeIncrement } from '../writer/write-increment.ts';

export interface DocTimestampOptions {
  tsaUrl: string;
  tsaTimeoutMs?: number;
  /** Bytes reserved for the token (the TSA's certificates and signature). */
  reserve?: number;
}

/**
 * Adds a document time-stamp (ETSI EN 319 142-1 5.4.3, PAdES B-LTA's archive time-stamp): an incremental update
 * with a signature field whose value is a /DocTimeStamp with SubFilter ETSI.RFC3161, its /Contents an RFC 3161
 * token over the whole file but the token itself.
 */
export async function addDocTimestamp(pdf: Uint8Array, opts: DocTimestampOptions): Promise<Buffer> {
  const revision = await openRevision(pdf, { allowRewrite: false });
  const sigRef = revision.context.nextRef();
  addSignatureField(revision, sigRef, 'Wathiq archive time-stamp');
  const reserve = opts.reserve ?? 24_576;
  const head = '<< /Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 /ByteRange ';
  const mid = ' /Contents <';
  const raw = Buffer.from(`${head}${BYTE_RANGE_PLACEHOLDER}${mid}${'0'.repeat(reserve * 2)}> >>`, 'latin1');
  const { pdf: out, rawOffsets } = writeIncrement(revision, new Map([[sigRef.objectNumber, raw]]));
  const at = rawOffsets.get(sigRef.objectNumber);
  if (at === undefined) throw new Error('document time-stamp dictionary was not written');
  const placeholder = {
    byteRangeAt: at + head.length,
    byteRangeLength: BYTE_RANGE_PLACEHOLDER.length,
    contentsAt: at + head.length + BYTE_RANGE_PLACEHOLDER.length + mid.length - 1,
    contentsLength: reserve * 2 + 2,
  };
  const digest = fillByteRange(out, placeholder);
  const token = await fetchTimestampToken(opts.tsaUrl, digest, opts.tsaTimeoutMs);
  fillContents(out, placeholder, token);
  return out;
}
