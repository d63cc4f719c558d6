/**
 * PNG images from approvers (drawn signatures, uploaded stamps), read completely and strictly. The approval page
 * validates with it before storing an image, and finalization decodes with it, so both apply the same rules and
 * the same caps: an image accepted at upload cannot fail when the final PDF is made.
 *
 * What "valid" means (PNG specification, third edition): the signature; IHDR first and only once, with a
 * permitted bit depth and colour type, compression 0, filter 0, interlace 0 or 1, and sides of at most
 * `maxSidePx`; every chunk's CRC; PLTE and tRNS where and as their colour type allows; contiguous IDAT chunks
 * holding one zlib stream that inflates to exactly the length the header implies (never further: that is the
 * cap against decompression bombs), with nothing after it; a valid filter type on every scanline; palette
 * indices within the palette; IEND last, with nothing after it. Unknown ancillary chunks are skipped (their CRC
 * still checked); unknown critical chunks are refused.
 */
import zlib from 'node:zlib';

/** Default of MAX_IMAGE_SIDE_PX. */
export const DEFAULT_MAX_IMAGE_SIDE_PX = 4096;

export interface PngLimits {
  /** Largest width and largest height, in pixels. */
  maxSidePx: number;
}

/** not_png: not a PNG at all; too_large: a valid header over the size limit; damaged: anything else. */
export type PngProblem = 'not_png' | 'too_large' | 'damaged';

export class PngError extends Error {
  constructor(
    readonly problem: PngProblem,
    message: string,
  ) {
    super(message);
    this.name = 'PngError';
  }
}

export type PngColorType = 0 | 2 | 3 | 4 | 6;

export interface PngHeader {
  width: number;
  height: number;
  bitDepth: number;
  colorType: PngColorType;
  interlaced: boolean;
}

/** One pass of the image data: the whole image, or one of Adam7's seven sub-images. */
export interface PngPass {
  /** Pixels and rows of this pass (both at least 1: empty passes are left out). */
  width: number;
  height: number;
  /** Bytes of one scanline without its filter byte. */
  rowBytes: number;
  /** Where this pass's pixel (i, j) lies in the image: (x0 + i·dx, y0 + j·dy). */
  x0: number;
  y0: number;
  dx: number;
  dy: number;
}

export interface PngLayout extends PngHeader {
  /** Samples per pixel: 1 (grey, palette), 2 (grey + alpha), 3 (RGB), 4 (RGBA). */
  channels: number;
  /** PLTE: RGB triples. */
  palette?: Buffer;
  /** tRNS as stored (palette alphas, or the transparent grey / RGB sample values). */
  transparency?: Buffer;
  /** The zlib stream: the IDAT chunks' data joined. */
  data: Buffer;
  passes: PngPass[];
  /** The exact length the image data inflates to: every scanline of every pass with its filter byte. */
  rawLength: number;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<PngColorType, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const BIT_DEPTHS: Record<PngColorType, readonly number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};
/** Adam7: x0, y0, dx, dy of each pass. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;
const MAX_UINT31 = 0x7fffffff;

export const damaged = (message: string) => new PngError('damaged', message);
const isLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isColorType = (c: number): c is PngColorType => c in CHANNELS;

/** What the chunks read so far have declared. */
interface ChunkState {
  header?: PngHeader;
  palette?: Buffer;
  transparency?: Buffer;
  idat: Buffer[];
  /** A chunk other than IDAT came after the first IDAT. */
  afterIdat: boolean;
}

interface Chunk {
  type: string;
  typeBytes: Buffer;
  data: Buffer;
  /** Offset of the next chunk. */
  end: number;
}

/**
 * The chunk structure of a PNG, checked throughout; the image data is not inflated here (see `inflateRows`
 * and `validatePng`). Cheap: one pass over the bytes with native CRC32.
 */
export function parsePng(png: Uint8Array, limits: PngLimits): PngLayout {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (b.length < SIGNATURE.length || !b.subarray(0, SIGNATURE.length).equals(SIGNATURE)) {
    throw new PngError('not_png', 'not a PNG file (no PNG signature)');
  }
  const state: ChunkState = { idat: [], afterIdat: false };
  let p = SIGNATURE.length;
  for (let index = 0; ; index++) {
    const chunk = readChunk(b, p);
    p = chunk.end;
    if (index === 0 && chunk.type !== 'IHDR') throw damaged('IHDR is not the first chunk');
    if (state.idat.length > 0 && chunk.type !== 'IDAT') state.afterIdat = true;
    if (chunk.type === 'IEND') {
      if (chunk.data.length !== 0) throw damaged('IEND has data');
      break;
    }
    if (chunk.type === 'IHDR') {
      if (index !== 0) throw damaged('a second IHDR chunk');
      state.header = readHeader(chunk.data, limits);
      continue;
    }
    acceptChunk(state, chunk);
  }
  if (p !== b.length) throw damaged(`${b.length - p} bytes after IEND`);
  const h = state.header as PngHeader; // the loop only ends at IEND, which cannot be the first chunk
  const { palette, transparency, idat } = state;
  if (idat.length === 0) throw damaged('no IDAT chunk');
  if (h.colorType === 3 && !palette) throw damaged('an indexed-colour image without PLTE');
  return {
    ...h,
    channels: CHANNELS[h.colorType],
    ...(palette ? { palette } : {}),
    ...(transparency ? { transparency } : {}),
    data: idat.length === 1 ? (idat[0] as Buffer) : Buffer.concat(idat),
    ...passLayout(h),
  };
}

/** The chunk at offset p: its length, type and CRC checked. */
function readChunk(b: Buffer, p: number): Chunk {
  if (p + 12 > b.length) throw damaged(p === b.length ? 'the file ends without IEND' : 'truncated chunk');
  const length = b.readUInt32BE(p);
  const typeBytes = b.subarray(p + 4, p + 8);
  if (!typeBytes.every(isLetter)) throw damaged(`invalid chunk type at byte ${p + 4}`);
  const type = typeBytes.toString('latin1');
  if (length > MAX_UINT31 || p + 12 + length > b.length) throw damaged(`truncated ${type} chunk`);
  const data = b.subarray(p + 8, p + 8 + length);
  if (zlib.crc32(b.subarray(p + 4, p + 8 + length)) !== b.readUInt32BE(p + 8 + length)) {
    throw damaged(`${type} chunk fails its CRC`);
  }
  return { type, typeBytes, data, end: p + 12 + length };
}

/** A chunk after IHDR and before IEND: PLTE, tRNS and IDAT where their colour type and order allow. */
function acceptChunk(state: ChunkState, { type, typeBytes, data }: Chunk): void {
  const h = state.header as PngHeader; // not the first chunk, and the first chunk was IHDR
  const length = data.length;
  switch (type) {
    case 'PLTE':
      if (state.palette) throw damaged('a second PLTE chunk');
      if (state.idat.length > 0) throw damaged('PLTE after IDAT');
      if (state.transparency) throw damaged('PLTE after tRNS');
      if (h.colorType === 0 || h.colorType === 4) throw damaged('PLTE in a greyscale image');
      if (length === 0 || length % 3 !== 0 || length / 3 > 256) throw damaged('PLTE of invalid length');
      if (h.colorType === 3 && length / 3 > 2 ** h.bitDepth) {
        throw damaged('PLTE has more entries than the bit depth can index');
      }
      state.palette = data;
      break;
    case 'tRNS':
      if (state.transparency) throw damaged('a second tRNS chunk');
      if (state.idat.length > 0) throw damaged('tRNS after IDAT');
      if (h.colorType === 4 || h.colorType === 6) throw damaged('tRNS in an image with an alpha channel');
      if (h.colorType === 3 && (!state.palette || length > state.palette.length / 3)) {
        throw damaged('tRNS with more entries than the palette');
      }
      if ((h.colorType === 0 && length !== 2) || (h.colorType === 2 && length !== 6)) {
        throw damaged('tRNS of invalid length');
      }
      state.transparency = data;
      break;
    case 'IDAT':
      if (state.afterIdat) throw damaged('IDAT chunks are not contiguous');
      state.idat.push(data);
      break;
    default:
      // Bit 5 of the first byte: ancillary (safe to skip); of the third byte: reserved, must be 0.
      if (((typeBytes[0] as number) & 0x20) === 0) throw damaged(`unknown critical chunk ${type}`);
      if (((typeBytes[2] as number) & 0x20) !== 0) throw damaged(`chunk ${type} sets the reserved bit`);
  }
}

/** The passes of the image data (one, or Adam7's non-empty ones) and the exact length they inflate to. */
function passLayout(h: PngHeader): { passes: PngPass[]; rawLength: number } {
  const bitsPerPixel = CHANNELS[h.colorType] * h.bitDepth;
  const passes: PngPass[] = [];
  for (const [x0, y0, dx, dy] of h.interlaced ? ADAM7 : ([[0, 0, 1, 1]] as const)) {
    const width = Math.ceil(Math.max(0, h.width - x0) / dx);
    const height = Math.ceil(Math.max(0, h.height - y0) / dy);
    if (width > 0 && height > 0) {
      passes.push({ width, height, rowBytes: Math.ceil((width * bitsPerPixel) / 8), x0, y0, dx, dy });
    }
  }
  const rawLength = passes.reduce((sum, pass) => sum + pass.height * (1 + pass.rowBytes), 0);
  return { passes, rawLength };
}

function readHeader(data: Buffer, limits: PngLimits): PngHeader {
  if (data.length !== 13) throw damaged('IHDR of invalid length');
  const width = data.readUInt32BE(0);
  const height = data.readUInt32BE(4);
  const bitDepth = data[8] as number;
  const colorType = data[9] as number;
  const [compression, filter, interlace] = [data[10], data[11], data[12]];
  if (width === 0 || height === 0 || width > MAX_UINT31 || height > MAX_UINT31) {
    throw damaged(`invalid dimensions ${width}×${height}`);
  }
  if (!isColorType(colorType)) throw damaged(`invalid colour type ${colorType}`);
  if (!BIT_DEPTHS[colorType].includes(bitDepth)) {
    throw damaged(`bit depth ${bitDepth} is not allowed with colour type ${colorType}`);
  }
  if (compression !== 0) throw damaged(`unknown compression method ${compression}`);
  if (filter !== 0) throw damaged(`unknown filter method ${filter}`);
  if (interlace !== 0 && interlace !== 1) throw damaged(`unknown interlace method ${interlace}`);
  if (width > limits.maxSidePx || height > limits.maxSidePx) {
    throw new PngError(
      'too_large',
      `${width}×${height} pixels is larger than ${limits.maxSidePx}×${limits.maxSidePx}`,
    );
  }
  return { width, height, bitDepth, colorType, interlaced: interlace === 1 };
}

/** Receives each scanline unfiltered: `row` is reused for the next scanline, so copy what you keep. */
