import zlib from 'node:zlib';
import type { PDFContext, PDFRef } from 'pdf-lib';
import { flateStream } from '../writer/flate.ts';

export interface DecodedPng {
  width: number;
  height: number;
  /** 8-bit samples without alpha: 1 (grey) or 3 (RGB) per pixel. */
  color: Buffer;
  colors: 1 | 3;
  /** 8-bit alpha per pixel, when the image has any transparency. */
  alpha?: Buffer;
}

/**
 * Decodes a non-interlaced PNG (any colour type, bit depth 8 or 16) with Node's zlib. Returns undefined for what
 * it does not handle (interlaced, bit depths below 8), for which the caller falls back to pdf-lib's decoder.
 * Throws on a damaged file.
 */
export function decodePng(png: Uint8Array): DecodedPng | undefined {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  let p = 8;
  let header: Buffer | undefined;
  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  const idat: Buffer[] = [];
  while (p + 8 <= b.length) {
    const length = b.readUInt32BE(p);
    const type = b.toString('latin1', p + 4, p + 8);
    const data = b.subarray(p + 8, p + 8 + length);
    if (data.length !== length) throw new Error('truncated PNG');
    if (type === 'IHDR') header = data;
    else if (type === 'PLTE') palette = data;
    else if (type === 'tRNS') transparency = data;
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    p += 12 + length;
  }
  if (!header || header.length < 13) throw new Error('PNG without header');
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const depth = header[8] ?? 0;
  const colorType = header[9] ?? 0;
  const interlace = header[12] ?? 0;
  if (interlace !== 0 || (depth !== 8 && depth !== 16)) return undefined;
  if (width === 0 || height === 0 || width * height > 40_000_000) throw new Error('PNG too large');
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[colorType];
  if (!channels || (colorType === 3 && (depth !== 8 || !palette))) return undefined;

  const bytesPerSample = depth / 8;
  const bpp = channels * bytesPerSample;
  const stride = width * bpp;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  if (raw.length < (stride + 1) * height) throw new Error('PNG data is short');
  const pixels = Buffer.alloc(stride * height);
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = pixels.subarray(y * stride, (y + 1) * stride);
    for (let x = 0; x < stride; x++) {
      const left = x >= bpp ? (row[x - bpp] as number) : 0;
      const up = prev[x] as number;
      const upLeft = x >= bpp ? (prev[x - bpp] as number) : 0;
      const v = src[x] as number;
      let out: number;
      switch (filter) {
        case 0:
          out = v;
          break;
        case 1:
          out = v + left;
          break;
        case 2:
          out = v + up;
          break;
        case 3:
          out = v + ((left + up) >> 1);
          break;
        case 4: {
          const pa = Math.abs(up - upLeft);
          const pb = Math.abs(left - upLeft);
          const pc = Math.abs(left + up - 2 * upLeft);
          out = v + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
          break;
        }
        default:
          throw new Error(`unknown PNG filter ${String(filter)}`);
      }
      row[x] = out & 0xff;
    }
    prev = row;
  }

  const n = width * height;
  const sample = (i: number, c: number) => pixels[(i * channels + c) * bytesPerSample] as number; // high byte
  if (colorType === 3) {
    const pal = palette as Buffer;
    const color = Buffer.alloc(n * 3);
    const alpha = transparency ? Buffer.alloc(n) : undefined;
    for (let i = 0; i < n; i++) {
      const idx = pixels[i] as number;
      pal.copy(color, i * 3, idx * 3, idx * 3 + 3);
      if (alpha)
        alpha[i] = idx < (transparency as Buffer).length ? ((transparency as Buffer)[idx] as number) : 255;
    }
    return { width, height, color, colors: 3, alpha };
  }
  const colors = colorType === 0 || colorType === 4 ? 1 : 3;
  const color = Buffer.alloc(n * colors);
  const hasAlpha = colorType === 4 || colorType === 6;
  const alpha = hasAlpha ? Buffer.alloc(n) : undefined;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < colors; c++) color[i * colors + c] = sample(i, c);
    if (alpha) alpha[i] = sample(i, colors);
  }
  return { width, height, color, colors, alpha: alpha && alpha.some((a) => a !== 255) ? alpha : undefined };
}

/** An image XObject (with an SMask for transparency) from a decoded PNG. */
export function embedDecodedPng(context: PDFContext, png: DecodedPng): PDFRef {
  const smask = png.alpha
    ? context.register(
        flateStream(context, png.alpha, {
          Type: 'XObject',
          Subtype: 'Image',
          Width: png.width,
          Height: png.height,
          ColorSpace: 'DeviceGray',
          BitsPerComponent: 8,
        }),
      )
    : undefined;
  return context.register(
    flateStream(context, png.color, {
      Type: 'XObject',
      Subtype: 'Image',
      Width: png.width,
      Height: png.height,
      ColorSpace: png.colors === 3 ? 'DeviceRGB' : 'DeviceGray',
      BitsPerComponent: 8,
      ...(smask ? { SMask: smask } : {}),
    }),
  );
}
