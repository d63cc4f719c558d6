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

const damaged = (message: string) => new PngError('damaged', message);
const isLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isColorType = (c: number): c is PngColorType => c in CHANNELS;

/**
 * The chunk structure of a PNG, checked throughout; the image data is not inflated here (see `inflateRows`
 * and `validatePng`). Cheap: one pass over the bytes with native CRC32.
 */
export function parsePng(png: Uint8Array, limits: PngLimits): PngLayout {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (b.length < SIGNATURE.length || !b.subarray(0, SIGNATURE.length).equals(SIGNATURE)) {
    throw new PngError('not_png', 'not a PNG file (no PNG signature)');
  }
  let header: PngHeader | undefined;
  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  const idat: Buffer[] = [];
  let afterIdat = false;
  let p = SIGNATURE.length;
  for (let index = 0; ; index++) {
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
    p += 12 + length;

    if (index === 0 && type !== 'IHDR') throw damaged('IHDR is not the first chunk');
    if (idat.length > 0 && type !== 'IDAT') afterIdat = true;
    if (type === 'IEND') {
      if (length !== 0) throw damaged('IEND has data');
      break;
    }
    if (type === 'IHDR') {
      if (index !== 0) throw damaged('a second IHDR chunk');
      header = readHeader(data, limits);
      continue;
    }
    const h = header as PngHeader; // index > 0: the first chunk was IHDR
    switch (type) {
      case 'PLTE':
        if (palette) throw damaged('a second PLTE chunk');
        if (idat.length > 0) throw damaged('PLTE after IDAT');
        if (transparency) throw damaged('PLTE after tRNS');
        if (h.colorType === 0 || h.colorType === 4) throw damaged('PLTE in a greyscale image');
        if (length === 0 || length % 3 !== 0 || length / 3 > 256) throw damaged('PLTE of invalid length');
        if (h.colorType === 3 && length / 3 > 2 ** h.bitDepth) {
          throw damaged('PLTE has more entries than the bit depth can index');
        }
        palette = data;
        break;
      case 'tRNS':
        if (transparency) throw damaged('a second tRNS chunk');
        if (idat.length > 0) throw damaged('tRNS after IDAT');
        if (h.colorType === 4 || h.colorType === 6) throw damaged('tRNS in an image with an alpha channel');
        if (h.colorType === 3 && (!palette || length > palette.length / 3)) {
          throw damaged('tRNS with more entries than the palette');
        }
        if ((h.colorType === 0 && length !== 2) || (h.colorType === 2 && length !== 6)) {
          throw damaged('tRNS of invalid length');
        }
        transparency = data;
        break;
      case 'IDAT':
        if (afterIdat) throw damaged('IDAT chunks are not contiguous');
        idat.push(data);
        break;
      default:
        // Bit 5 of the first byte: ancillary (safe to skip); of the third byte: reserved, must be 0.
        if (((typeBytes[0] as number) & 0x20) === 0) throw damaged(`unknown critical chunk ${type}`);
        if (((typeBytes[2] as number) & 0x20) !== 0) throw damaged(`chunk ${type} sets the reserved bit`);
    }
  }
  if (p !== b.length) throw damaged(`${b.length - p} bytes after IEND`);
  const h = header as PngHeader; // the loop only ends at IEND, which cannot be the first chunk
  if (idat.length === 0) throw damaged('no IDAT chunk');
  if (h.colorType === 3 && !palette) throw damaged('an indexed-colour image without PLTE');

  const channels = CHANNELS[h.colorType];
  const bitsPerPixel = channels * h.bitDepth;
  const passes: PngPass[] = [];
  for (const [x0, y0, dx, dy] of h.interlaced ? ADAM7 : ([[0, 0, 1, 1]] as const)) {
    const width = Math.ceil(Math.max(0, h.width - x0) / dx);
    const height = Math.ceil(Math.max(0, h.height - y0) / dy);
    if (width > 0 && height > 0) {
      passes.push({ width, height, rowBytes: Math.ceil((width * bitsPerPixel) / 8), x0, y0, dx, dy });
    }
  }
  const rawLength = passes.reduce((sum, pass) => sum + pass.height * (1 + pass.rowBytes), 0);
  return {
    ...h,
    channels,
    ...(palette ? { palette } : {}),
    ...(transparency ? { transparency } : {}),
    data: idat.length === 1 ? (idat[0] as Buffer) : Buffer.concat(idat),
    passes,
    rawLength,
  };
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
export type RowSink = (row: Buffer, pass: PngPass, rowInPass: number) => void;

/**
 * Walks the inflated image data as it arrives, in chunks of any size: refuses a byte past `rawLength` at once,
 * checks every filter type, and — when there is a sink, or palette indices to check — unfilters each scanline.
 */
class Scanlines {
  private received = 0;
  private passIndex = 0;
  private row = 0;
  /** Bytes of the current scanline received so far; -1 while its filter byte is awaited. */
  private column = -1;
  private filter = 0;
  private current: Buffer;
  private previous: Buffer;
  private readonly unfiltering: boolean;
  private readonly paletteSize: number | undefined;
  /** Bytes per complete pixel, at least 1: the distance filters look back. */
  private readonly bpp: number;

  constructor(
    private readonly layout: PngLayout,
    private readonly sink?: RowSink,
  ) {
    const entries = layout.palette ? layout.palette.length / 3 : 0;
    // Indices can only be out of range when the palette has fewer entries than the bit depth can index.
    this.paletteSize = layout.colorType === 3 && entries < 2 ** layout.bitDepth ? entries : undefined;
    this.unfiltering = sink !== undefined || this.paletteSize !== undefined;
    const widest = Math.max(...layout.passes.map((pass) => pass.rowBytes));
    this.current = Buffer.alloc(this.unfiltering ? widest : 0);
    this.previous = Buffer.alloc(this.unfiltering ? widest : 0);
    this.bpp = Math.max(1, (layout.channels * layout.bitDepth) / 8);
  }

  push(chunk: Buffer): void {
    if (this.received + chunk.length > this.layout.rawLength) {
      throw damaged(`the image data inflates past the ${this.layout.rawLength} bytes its header implies`);
    }
    this.received += chunk.length;
    let i = 0;
    while (i < chunk.length) {
      const pass = this.layout.passes[this.passIndex] as PngPass; // received <= rawLength
      if (this.column < 0) {
        const filter = chunk[i++] as number;
        if (filter > 4) throw damaged(`invalid filter type ${filter} on a scanline`);
        this.filter = filter;
        this.column = 0;
        continue;
      }
      const n = Math.min(pass.rowBytes - this.column, chunk.length - i);
      if (this.unfiltering) chunk.copy(this.current, this.column, i, i + n);
      this.column += n;
      i += n;
      if (this.column === pass.rowBytes) this.endRow(pass);
    }
  }

  finish(): void {
    if (this.received !== this.layout.rawLength) {
      throw damaged(
        `the image data inflates to ${this.received} bytes, not the ${this.layout.rawLength} its header implies`,
      );
    }
  }

  private endRow(pass: PngPass): void {
    if (this.unfiltering) {
      const row = this.current.subarray(0, pass.rowBytes);
      unfilter(this.filter, row, this.previous, this.bpp);
      if (this.paletteSize !== undefined) this.checkIndices(row, pass.width);
      this.sink?.(row, pass, this.row);
      [this.current, this.previous] = [this.previous, this.current];
    }
    this.column = -1;
    if (++this.row === pass.height) {
      this.passIndex++;
      this.row = 0;
      this.previous.fill(0); // a pass's first scanline has no scanline above it
    }
  }

  private checkIndices(row: Buffer, width: number): void {
    const size = this.paletteSize as number;
    for (let x = 0; x < width; x++) {
      const index = sampleAt(row, x, this.layout.bitDepth);
      if (index >= size) throw damaged(`a pixel uses palette entry ${index}; the palette has ${size}`);
    }
  }
}

/** The `index`-th sample of a scanline at the given bit depth (16-bit samples whole). */
export function sampleAt(row: Buffer, index: number, bitDepth: number): number {
  if (bitDepth === 8) return row[index] as number;
  if (bitDepth === 16) return row.readUInt16BE(index * 2);
  const bit = index * bitDepth;
  return ((row[bit >> 3] as number) >> (8 - bitDepth - (bit & 7))) & ((1 << bitDepth) - 1);
}

function unfilter(filter: number, row: Buffer, above: Buffer, bpp: number): void {
  const n = row.length;
  switch (filter) {
    case 1: // Sub
      for (let x = bpp; x < n; x++) row[x] = (row[x] as number) + (row[x - bpp] as number);
      return;
    case 2: // Up
      for (let x = 0; x < n; x++) row[x] = (row[x] as number) + (above[x] as number);
      return;
    case 3: // Average
      for (let x = 0; x < n; x++) {
        const left = x >= bpp ? (row[x - bpp] as number) : 0;
        row[x] = (row[x] as number) + ((left + (above[x] as number)) >> 1);
      }
      return;
    case 4: // Paeth
      for (let x = 0; x < n; x++) {
        const a = x >= bpp ? (row[x - bpp] as number) : 0;
        const b = above[x] as number;
        const c = x >= bpp ? (above[x - bpp] as number) : 0;
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        row[x] = (row[x] as number) + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      }
      return;
    default: // None
      return;
  }
}

/**
 * Inflates and walks the image data synchronously, handing each unfiltered scanline to `sink`. zlib stops at
 * `maxOutputLength` = the exact length the header implies, so a bomb costs no more than an honest image.
 * For decoding (finalization runs in the worker); request handlers use `validatePng`, which does not block.
 */
export function inflateRows(layout: PngLayout, sink: RowSink): void {
  let inflated: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    // `info: true` also returns the engine, whose bytesWritten tells how much of the input the stream used.
    inflated = zlib.inflateSync(layout.data, {
      maxOutputLength: layout.rawLength,
      info: true,
    }) as unknown as typeof inflated;
  } catch (err) {
    throw inflateError(err, layout);
  }
  if (inflated.engine.bytesWritten !== layout.data.length)
    throw damaged('data after the end of the zlib stream');
  const lines = new Scanlines(layout, sink);
  lines.push(inflated.buffer);
  lines.finish();
}

function inflateError(err: unknown, layout: PngLayout): PngError {
  if (err instanceof PngError) return err;
  if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
    return damaged(`the image data inflates past the ${layout.rawLength} bytes its header implies`);
  }
  return damaged(`the image data does not inflate (${(err as Error).message})`);
}

/**
 * Checks a PNG completely without keeping its pixels and without blocking the event loop: the image data is
 * inflated by a zlib stream (on libuv's thread pool) and counted as it comes, and the stream is destroyed at the
 * first byte past the length the header implies. Resolves to the header; rejects with a PngError.
 */
export async function validatePng(png: Uint8Array, limits: PngLimits): Promise<PngHeader> {
  const layout = parsePng(png, limits);
  const lines = new Scanlines(layout);
  await new Promise<void>((resolve, reject) => {
    const inflate = zlib.createInflate({ chunkSize: 64 * 1024 });
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      inflate.destroy();
      reject(inflateError(err, layout));
    };
    inflate.on('data', (chunk: Buffer) => {
      try {
        lines.push(chunk);
      } catch (err) {
        fail(err);
      }
    });
    inflate.on('error', fail);
    inflate.on('end', () => {
      if (settled) return;
      try {
        if (inflate.bytesWritten !== layout.data.length)
          throw damaged('data after the end of the zlib stream');
        lines.finish();
        settled = true;
        resolve();
      } catch (err) {
        fail(err);
      }
    });
    inflate.end(layout.data);
  });
  const { width, height, bitDepth, colorType, interlaced } = layout;
  return { width, height, bitDepth, colorType, interlaced };
}
