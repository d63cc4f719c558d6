import zlib from 'node:zlib';
import {
  damaged,
  parsePng,
  PngError,
  type PngHeader,
  type PngLayout,
  type PngLimits,
  type PngPass,
} from './png.ts';

/**
 * The image data of a PNG (see png.ts for the chunk structure): inflated, counted against the length its header
 * implies, every scanline's filter checked and, when asked, unfiltered row by row.
 */

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
