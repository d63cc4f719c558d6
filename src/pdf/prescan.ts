import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import {
  PDFArray,
  PDFContext,
  type PDFDict,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFParser,
  PDFRawStream,
  PDFRef,
} from 'pdf-lib';
import { type DecodeLimits, LIMIT_REASONS, PdfLimitError, decodeBudget } from './limits.ts';
import { lastStartXref, nextXrefOffsets, readXrefSectionHead } from './writer/pdf-revision.ts';

/**
 * What reading a PDF decodes, bounded before anything is decoded.
 *
 * pdf-lib decodes every object stream and cross-reference stream when it loads a file (PDFParser ->
 * PDFObjectStreamParser / PDFXRefStreamParser), with no limit, and `checkXref` decodes the cross-reference
 * streams of the startxref chain. Those are the only streams the server decodes (content streams, images and
 * fonts of the original are copied as they are), and every one of them is a top-level indirect object, or a
 * section of the startxref chain. So the pre-scan:
 *
 *  1. parses the file's top-level objects with pdf-lib's own parser, with the decoding taken out, so it sees
 *     exactly the streams and dictionaries that the real load will decode;
 *  2. walks the startxref chain as `checkXref` does, reading only the sections' dictionaries;
 *  3. refuses filter chains longer than `maxFilters` on any stream, anything but FlateDecode on the streams the
 *     server decodes, indirect values where the decoder would look at them, and too many objects or object
 *     streams;
 *  4. inflates those streams with zlib into a counter (nothing is kept), stopping as soon as the total passes the
 *     budget: `maxDecodeRatio` times the file's size, at most `maxDecodedBytes`.
 *
 * Throws PdfLimitError with a reason for the uploader. A file pdf-lib cannot parse passes through (the real load
 * then refuses it as damaged at the same place, before decoding anything further).
 */
export async function checkDecodeLimits(bytes: Uint8Array, limits: DecodeLimits): Promise<void> {
  const found = await scanTopLevel(bytes, limits);
  for (const at of walkXrefChain(bytes)) {
    if (!found.offsets.has(at.offset)) found.decoded.push(describeDecoded(at.stream, 'XRef', limits));
  }
  if (found.objectStreams > limits.maxObjectStreams) {
    throw new PdfLimitError(LIMIT_REASONS.tooManyObjectStreams(limits.maxObjectStreams));
  }
  const objects = found.objects + found.decoded.reduce((n, d) => n + d.declaredObjects, 0);
  if (objects > limits.maxObjects) throw new PdfLimitError(LIMIT_REASONS.tooManyObjects(limits.maxObjects));

  const budget = decodeBudget(bytes.length, limits);
  let total = 0;
  for (const d of found.decoded) {
    const length = await decodedLength(d.contents, d.flateLayers, budget - total);
    if (length === undefined) throw new PdfLimitError(LIMIT_REASONS.expands(budget, limits));
    total += length;
  }
}

interface Decoded {
  contents: Uint8Array;
  /** Number of FlateDecode filters (the only filter accepted on these streams). */
  flateLayers: number;
  /** /N of an object stream, /Size or the /Index lengths of a cross-reference stream. */
  declaredObjects: number;
}

interface Scan {
  /** Top-level indirect objects. */
  objects: number;
  objectStreams: number;
  /** The streams the load will decode, in file order. */
  decoded: Decoded[];
  /** Where the cross-reference streams among them start (the chain walk charges each stream once). */
  offsets: Set<number>;
}

/** pdf-lib's parser, reached past its TypeScript privacy: the methods PDFParser.parseIndirectObject calls. */
interface ParserInternals {
  bytes: { offset(): number };
  context: PDFContext;
  parseIndirectObjectHeader(): PDFRef;
  skipWhitespaceAndComments(): void;
  parseObject(): PDFObject;
  matchKeyword(keyword: number[]): boolean;
  parseIndirectObject(): Promise<PDFRef>;
  parseDocument(): Promise<PDFContext>;
}

const ENDOBJ = [...'endobj'].map((c) => c.charCodeAt(0));
const TYPE = PDFName.of('Type');
const FILTER = PDFName.of('Filter');
const OBJ_STM = PDFName.of('ObjStm');
const XREF = PDFName.of('XRef');
const FLATE = PDFName.of('FlateDecode');

/**
 * Runs pdf-lib's PDFParser over the file with its `parseIndirectObject` replaced by the same steps minus the
 * decoding: header, object, `endobj`; object and cross-reference streams are noted (and, as in pdf-lib, not
 * assigned to the context), every other object is assigned, so dictionary lookups resolve as in the real load.
 */
async function scanTopLevel(bytes: Uint8Array, limits: DecodeLimits): Promise<Scan> {
  const scan: Scan = { objects: 0, objectStreams: 0, decoded: [], offsets: new Set() };
  const parser = PDFParser.forBytesWithOptions(bytes, Infinity, true) as unknown as ParserInternals;
  let refusal: PdfLimitError | undefined;
  parser.parseIndirectObject = function (this: ParserInternals) {
    const at = this.bytes.offset();
    const ref = this.parseIndirectObjectHeader();
    this.skipWhitespaceAndComments();
    const object = this.parseObject();
    this.skipWhitespaceAndComments();
    this.matchKeyword(ENDOBJ);
    try {
      scan.objects += 1;
      if (scan.objects > limits.maxObjects) {
        throw new PdfLimitError(LIMIT_REASONS.tooManyObjects(limits.maxObjects));
      }
      const kind = object instanceof PDFRawStream ? streamKind(object, limits) : undefined;
      if (kind && object instanceof PDFRawStream) {
        scan.decoded.push(describeDecoded(object, kind, limits));
        if (kind === 'ObjStm') scan.objectStreams += 1;
        else scan.offsets.add(at);
      } else this.context.assign(ref, object);
    } catch (err) {
      // pdf-lib turns any error here into "invalid object"; the refusal is kept and rethrown below.
      if (err instanceof PdfLimitError) refusal ??= err;
      throw err;
    }
    return Promise.resolve(ref);
  };
  try {
    await parser.parseDocument();
  } catch {
    // A parse error: the real load stops at the same place (same parser, same options) before decoding anything
    // the scan has not seen, and refuses the file as damaged.
  }
  if (refusal) throw refusal;
  return scan;
}

/** Whether pdf-lib will decode this stream at load, and as what. Refuses what would make the answer unsure. */
function streamKind(stream: PDFRawStream, limits: DecodeLimits): 'ObjStm' | 'XRef' | undefined {
  const dict = stream.dict;
  checkChainLength(dict, limits);
  const typeEntry = dict.get(TYPE);
  // pdf-lib resolves /Type through the objects parsed so far, object streams included: an indirect /Type could
  // name an object the scan has not decoded.
  if (typeEntry instanceof PDFRef) throw new PdfLimitError(LIMIT_REASONS.unusual('an indirect stream /Type'));
  if (typeEntry === OBJ_STM) return 'ObjStm';
  if (typeEntry === XREF) return 'XRef';
  return undefined;
}

function checkChainLength(dict: PDFDict, limits: DecodeLimits): void {
  const filter = dict.get(FILTER);
  const resolved = filter instanceof PDFRef ? dict.context.lookup(filter) : filter;
  if (resolved instanceof PDFArray && resolved.size() > limits.maxFilters) {
    throw new PdfLimitError(LIMIT_REASONS.filterChain(resolved.size(), limits.maxFilters));
  }
}

/** An object or cross-reference stream: its filters must all be direct FlateDecode, its counts direct numbers. */
function describeDecoded(stream: PDFRawStream, kind: 'ObjStm' | 'XRef', limits: DecodeLimits): Decoded {
  const dict = stream.dict;
  checkChainLength(dict, limits);
  const filter = dict.get(FILTER);
  const filters: PDFObject[] =
    filter === undefined ? [] : filter instanceof PDFArray ? filter.asArray() : [filter];
  if (filters.some((f) => f !== FLATE)) {
    const names = filters.map((f) => (f instanceof PDFName ? f.asString() : 'an indirect filter')).join(' ');
    throw new PdfLimitError(LIMIT_REASONS.oddObjectStream(names));
  }
  const direct = (key: string): PDFObject | undefined => {
    const value = dict.get(PDFName.of(key));
    if (value instanceof PDFRef) throw new PdfLimitError(LIMIT_REASONS.unusual(`an indirect /${key}`));
    return value;
  };
  let declaredObjects = 0;
  if (kind === 'ObjStm') {
    const n = direct('N');
    if (n instanceof PDFNumber) declaredObjects = Math.max(0, n.asNumber());
  } else {
    // PDFXRefStreamParser makes one entry per declared object, whatever the stream holds.
    const index = direct('Index');
    const size = direct('Size');
    if (index instanceof PDFArray) {
      for (let i = 1; i < index.size(); i += 2) {
        const length = index.get(i);
        if (length instanceof PDFRef)
          throw new PdfLimitError(LIMIT_REASONS.unusual('an indirect /Index entry'));
        if (length instanceof PDFNumber) declaredObjects += Math.max(0, length.asNumber());
      }
    } else if (size instanceof PDFNumber) declaredObjects = Math.max(0, size.asNumber());
    direct('W');
  }
  return { contents: stream.contents, flateLayers: filters.length, declaredObjects };
}

/**
 * The cross-reference streams of the startxref chain, visited in `checkXref`'s order (which stops at the first
 * error; this walk stops there too, or reads on where `checkXref` would have stopped on a bad entry).
 */
function walkXrefChain(bytes: Uint8Array): { offset: number; stream: PDFRawStream }[] {
  const out: { offset: number; stream: PDFRawStream }[] = [];
  const start = lastStartXref(bytes);
  if (start === undefined) return out;
  const context = PDFContext.create();
  const seen = new Set<number>();
  const pending = [start];
  try {
    while (pending.length > 0) {
      const offset = pending.shift() as number;
      if (seen.has(offset)) continue;
      if (seen.size > 1000) break;
      seen.add(offset);
      const section = readXrefSectionHead(bytes, offset, context);
      if (section.kind === 'stream') out.push({ offset, stream: section.stream });
      pending.push(...nextXrefOffsets(section.kind === 'stream' ? section.stream.dict : section.trailer));
    }
  } catch (err) {
    if (err instanceof PdfLimitError) throw err;
    // checkXref reports the chain as broken here and decodes nothing further.
  }
  return out;
}

/** Inflating in 256 KB pieces counts about 2 GB/s (16 KB, zlib's default, a tenth of that). */
const INFLATE_CHUNK = 256 * 1024;

class OverBudget extends Error {}
class Corrupt extends Error {}

/**
 * The length of `contents` after `layers` FlateDecode filters, or undefined past `cap`. The output is counted and
 * dropped as it comes (in 256 KB pieces), so a bomb costs neither memory nor more time than inflating `cap` bytes takes.
 *
 * Each layer is inflated as pdf-lib's decoder (pdf.js's FlateStream) reads it: the zlib header checked the same
 * way, then the raw deflate data, with no Adler-32 check and nothing read after the final block; truncated data
 * counts what it yields. Data zlib still cannot inflate is refused: pdf.js's decoder is laxer (it reads on past a
 * distance too far back), so what it would make of it is not known.
 */
async function decodedLength(contents: Uint8Array, layers: number, cap: number): Promise<number | undefined> {
  if (layers === 0) return contents.length <= cap ? contents.length : undefined;
  let total = 0;
  const counter = new Writable({
    highWaterMark: INFLATE_CHUNK,
    write(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      callback(total > cap ? new OverBudget() : null);
    },
  });
  const stages = Array.from({ length: layers }, () => [
    zlibHeader(),
    zlib.createInflateRaw({ chunkSize: INFLATE_CHUNK, finishFlush: zlib.constants.Z_SYNC_FLUSH }),
  ]).flat();
  try {
    await pipeline([Readable.from([contents]), ...stages, counter]);
    return total;
  } catch (err) {
    if (err instanceof OverBudget) return undefined;
    throw new PdfLimitError(LIMIT_REASONS.corruptStream);
  }
}

/** Checks and drops the two-byte zlib header (RFC 1950) as FlateStream does: deflate, FCHECK, no preset dictionary. */
function zlibHeader(): Transform {
  const header: number[] = [];
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      let rest = chunk;
      while (header.length < 2 && rest.length > 0) {
        header.push(rest[0] as number);
        rest = rest.subarray(1);
      }
      if (header.length < 2) return callback();
      const [cmf = 0, flg = 0] = header;
      if ((cmf & 0x0f) !== 0x08 || ((cmf << 8) + flg) % 31 !== 0 || flg & 0x20)
        return callback(new Corrupt());
      callback(null, rest.length > 0 ? rest : undefined);
    },
    flush(callback) {
      callback(header.length < 2 ? new Corrupt() : null);
    },
  });
}
