import zlib from 'node:zlib';

/**
 * A small PNG encoder for tests, written from the specification independently of src/images/png.ts: every colour
 * type and bit depth, Adam7 interlacing, and all five scanline filters, so the reader meets the files real
 * encoders make. Its pieces (`chunk`, `ihdr`, `pngOf`) also build the broken files the tests feed it.
 */

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** One chunk: length, type, data and CRC (a wrong `crc` on request). */
export function chunk(type: string, data: Buffer = Buffer.alloc(0), crc?: number): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc ?? zlib.crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, tail]);
}

export function ihdr(
  width: number,
  height: number,
  options: {
    bitDepth?: number;
    colorType?: number;
    compression?: number;
    filter?: number;
    interlace?: number;
  } = {},
): Buffer {
  const data = Buffer.alloc(13);
  data.writeUInt32BE(width, 0);
  data.writeUInt32BE(height, 4);
  data.set(
    [
      options.bitDepth ?? 8,
      options.colorType ?? 6,
      options.compression ?? 0,
      options.filter ?? 0,
      options.interlace ?? 0,
    ],
    8,
  );
  return chunk('IHDR', data);
}

/** The signature followed by these chunks, as they are. */
export const pngOf = (...chunks: Buffer[]): Buffer => Buffer.concat([PNG_SIGNATURE, ...chunks]);

export interface ImageSpec {
  width: number;
  height: number;
  colorType: 0 | 2 | 3 | 4 | 6;
  bitDepth: number;
  interlace?: 0 | 1;
  /** The samples of pixel (x, y), at the image's bit depth: channels-many values (a palette index for type 3). */
  samples: (x: number, y: number) => number[];
  palette?: [number, number, number][];
  trns?: Buffer;
}

const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/** Packs one row of samples at `bitDepth` (most significant bits first; 16-bit big-endian). */
function packRow(samples: number[], bitDepth: number): Buffer {
  const out = Buffer.alloc(Math.ceil((samples.length * bitDepth) / 8));
  samples.forEach((v, i) => {
    if (bitDepth === 16) out.writeUInt16BE(v, i * 2);
    else if (bitDepth === 8) out[i] = v;
    else {
      const bit = i * bitDepth;
      out[bit >> 3] = (out[bit >> 3] as number) | (v << (8 - bitDepth - (bit & 7)));
    }
  });
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Applies filter `type` to a row given the (unfiltered) row above; the filter byte first. */
function filterRow(type: number, row: Buffer, above: Buffer, bpp: number): Buffer {
  const out = Buffer.alloc(row.length + 1);
  out[0] = type;
  for (let x = 0; x < row.length; x++) {
    const a = x >= bpp ? (row[x - bpp] as number) : 0;
    const b = above[x] ?? 0;
    const c = x >= bpp ? (above[x - bpp] ?? 0) : 0;
    const predictor = [0, a, b, Math.floor((a + b) / 2), paeth(a, b, c)][type] as number;
    out[x + 1] = ((row[x] as number) - predictor) & 0xff;
  }
  return out;
}

/** The inflated image data: every pass's scanlines, filtered with types cycling 0, 1, 2, 3, 4. */
export function scanlines(spec: ImageSpec): Buffer {
  const channels = CHANNELS[spec.colorType];
  const bpp = Math.max(1, (channels * spec.bitDepth) / 8);
  const passes = spec.interlace === 1 ? ADAM7 : ([[0, 0, 1, 1]] as const);
  const out: Buffer[] = [];
  let n = 0;
  for (const [x0, y0, dx, dy] of passes) {
    let above: Buffer = Buffer.alloc(0);
    for (let y = y0; y < spec.height; y += dy) {
      const samples: number[] = [];
      for (let x = x0; x < spec.width; x += dx) samples.push(...spec.samples(x, y));
      if (samples.length === 0) break;
      const row = packRow(samples, spec.bitDepth);
      out.push(filterRow(n++ % 5, row, above, bpp));
      above = row;
    }
  }
  return Buffer.concat(out);
}

/** A valid PNG of the spec; `idat` replaces the zlib stream, `split` cuts it into that many IDAT chunks. */
export function encodePng(spec: ImageSpec, options: { idat?: Buffer; split?: number } = {}): Buffer {
  const data = options.idat ?? zlib.deflateSync(scanlines(spec));
  const parts = options.split ?? 1;
  const size = Math.ceil(data.length / parts);
  const idats = Array.from({ length: parts }, (_, i) =>
    chunk('IDAT', data.subarray(i * size, (i + 1) * size)),
  );
  return pngOf(
    ihdr(spec.width, spec.height, {
      bitDepth: spec.bitDepth,
      colorType: spec.colorType,
      interlace: spec.interlace ?? 0,
    }),
    ...(spec.palette ? [chunk('PLTE', Buffer.from(spec.palette.flat()))] : []),
    ...(spec.trns ? [chunk('tRNS', spec.trns)] : []),
    ...idats,
    chunk('IEND'),
  );
}

/** An 8-bit RGBA image of `width` × `height` with a gradient, filtered with every filter type. */
export const rgba = (width: number, height: number, interlace: 0 | 1 = 0): Buffer =>
  encodePng({
    width,
    height,
    colorType: 6,
    bitDepth: 8,
    interlace,
    samples: (x, y) => [(x * 7) & 255, (y * 13) & 255, (x + y) & 255, (x * y) & 255],
  });

/** A deflate stream of `bytes` zero bytes, made without holding them all (a decompression bomb). */
export function deflatedZeros(bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const deflate = zlib.createDeflate({ level: 9 });
    const out: Buffer[] = [];
    deflate.on('data', (c: Buffer) => out.push(c));
    deflate.on('end', () => resolve(Buffer.concat(out)));
    deflate.on('error', reject);
    const block = Buffer.alloc(1024 * 1024);
    let left = bytes;
    const write = () => {
      while (left > 0) {
        const n = Math.min(left, block.length);
        left -= n;
        if (!deflate.write(block.subarray(0, n))) {
          deflate.once('drain', write);
          return;
        }
      }
      deflate.end();
    };
    write();
  });
}

export const dataUrl = (png: Buffer): string => `data:image/png;base64,${png.toString('base64')}`;
