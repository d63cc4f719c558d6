import type { PDFContext, PDFRef } from 'pdf-lib';
import { inflateRows, sampleAt } from '../../images/png-inflate.ts';
import { type PngLimits, type PngPass, parsePng } from '../../images/png.ts';
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

/** Scale of a sample of 1, 2 or 4 bits to 8 bits (255 / (2^depth - 1)). */
const SCALE: Record<number, number> = { 1: 255, 2: 85, 4: 17, 8: 1 };

/**
 * Decodes any valid PNG (every colour type and bit depth, interlaced or not) to 8-bit samples for a PDF image,
 * through the same reader and caps as the approval page's upload check. Throws a PngError for an image that
 * check would refuse.
 */
export function decodePng(png: Uint8Array, limits: PngLimits): DecodedPng {
  const layout = parsePng(png, limits);
  const { width, height, bitDepth, colorType, channels } = layout;
  const n = width * height;
  const colors = colorType === 0 || colorType === 4 ? 1 : 3;
  const color = Buffer.alloc(n * colors);
  const alpha = colorType === 4 || colorType === 6 || layout.transparency ? Buffer.alloc(n, 255) : undefined;
  const palette = layout.palette;
  const trns = layout.transparency;
  // tRNS of a grey or RGB image: the one sample value (or RGB triple) that is fully transparent.
  const key = trns && (colorType === 0 || colorType === 2) ? trns : undefined;
  const to8 = (v: number) => (bitDepth === 16 ? v >> 8 : v * (SCALE[bitDepth] as number));

  inflateRows(layout, (row: Buffer, pass: PngPass, j: number) => {
    let px = (pass.y0 + j * pass.dy) * width + pass.x0;
    if (bitDepth === 8 && colorType !== 3 && !key) {
      // The common case (what browsers draw): bytes are samples.
      const end = pass.width * channels;
      for (let k = 0; k < end; k += channels, px += pass.dx) {
        if (colors === 3) {
          color[px * 3] = row[k] as number;
          color[px * 3 + 1] = row[k + 1] as number;
          color[px * 3 + 2] = row[k + 2] as number;
        } else color[px] = row[k] as number;
        if (alpha) alpha[px] = row[k + colors] as number;
      }
      return;
    }
    for (let i = 0; i < pass.width; i++, px += pass.dx) {
      if (colorType === 3) {
        const index = sampleAt(row, i, bitDepth); // within the palette: inflateRows checks
        (palette as Buffer).copy(color, px * 3, index * 3, index * 3 + 3);
        if (alpha && trns) alpha[px] = index < trns.length ? (trns[index] as number) : 255;
        continue;
      }
      let transparent = key !== undefined;
      for (let c = 0; c < colors; c++) {
        const v = sampleAt(row, i * channels + c, bitDepth);
        color[px * colors + c] = to8(v);
        if (key && v !== key.readUInt16BE(c * 2)) transparent = false;
      }
      if (alpha)
        alpha[px] = key ? (transparent ? 0 : 255) : to8(sampleAt(row, i * channels + colors, bitDepth));
    }
  });
  const opaque = alpha?.equals(Buffer.alloc(n, 255)) ?? true;
  return { width, height, color, colors, ...(opaque ? {} : { alpha }) };
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
