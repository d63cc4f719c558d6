import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { validatePng } from '../../src/images/png-inflate.ts';
import { type PngLimits, type PngProblem, PngError } from '../../src/images/png.ts';
import { decodePng } from '../../src/pdf/compose/png.ts';
import { TINY_PNG } from '../helpers/approval-flow.ts';
import {
  type ImageSpec,
  chunk,
  deflatedZeros,
  encodePng,
  ihdr,
  pngOf,
  rgba,
  scanlines,
} from '../helpers/png.ts';

const LIMITS: PngLimits = { maxSidePx: 4096 };

/** The upload check and the decoder finalization uses agree: both refuse, with the same problem. */
async function refused(
  png: Buffer,
  limits: PngLimits = LIMITS,
): Promise<{ problem: PngProblem; message: string }> {
  const upload = await validatePng(png, limits).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(upload, 'validatePng accepted it').toBeInstanceOf(PngError);
  let decode: unknown;
  try {
    decodePng(png, limits);
  } catch (err) {
    decode = err;
  }
  expect(decode, 'decodePng accepted it').toBeInstanceOf(PngError);
  expect((decode as PngError).problem).toBe((upload as PngError).problem);
  return { problem: (upload as PngError).problem, message: (upload as PngError).message };
}

const idatOf = (raw: Buffer) => chunk('IDAT', zlib.deflateSync(raw));
const rgbaSpec = (width: number, height: number): ImageSpec => ({
  width,
  height,
  colorType: 6,
  bitDepth: 8,
  samples: (x, y) => [x & 255, y & 255, (x ^ y) & 255, 200],
});

describe('valid PNGs are accepted and decoded', () => {
  // Every colour type with every bit depth it allows, plain and interlaced, at sizes that leave some Adam7
  // passes empty and rows ending mid-byte.
  const cases: { colorType: 0 | 2 | 3 | 4 | 6; bitDepth: number }[] = [
    ...[1, 2, 4, 8, 16].map((bitDepth) => ({ colorType: 0 as const, bitDepth })),
    ...[8, 16].map((bitDepth) => ({ colorType: 2 as const, bitDepth })),
    ...[1, 2, 4, 8].map((bitDepth) => ({ colorType: 3 as const, bitDepth })),
    ...[8, 16].map((bitDepth) => ({ colorType: 4 as const, bitDepth })),
    ...[8, 16].map((bitDepth) => ({ colorType: 6 as const, bitDepth })),
  ];
  const sizes = [
    [1, 1],
    [3, 2],
    [13, 7],
    [40, 33],
  ] as const;

  it.each(
    cases.flatMap((c) => [0, 1].flatMap((interlace) => sizes.map(([w, h]) => ({ ...c, interlace, w, h })))),
  )(
    'colour type $colorType, bit depth $bitDepth, interlace $interlace, $w×$h',
    async ({ colorType, bitDepth, interlace, w, h }) => {
      const max = 2 ** bitDepth - 1;
      const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colorType];
      const entries = Math.min(max + 1, 5);
      const sample = (x: number, y: number, c: number) =>
        colorType === 3 ? (x + 2 * y) % entries : (x * 31 + y * 17 + c * 101) % (max + 1);
      const palette: [number, number, number][] = Array.from({ length: entries }, (_, i) => [
        i * 50,
        255 - i * 40,
        i * 7,
      ]);
      const spec: ImageSpec = {
        width: w,
        height: h,
        colorType,
        bitDepth: bitDepth,
        interlace: interlace as 0 | 1,
        samples: (x, y) => Array.from({ length: channels }, (_, c) => sample(x, y, c)),
        ...(colorType === 3 ? { palette } : {}),
      };
      const png = encodePng(spec, { split: 3 });
      expect(await validatePng(png, LIMITS)).toEqual({
        width: w,
        height: h,
        bitDepth,
        colorType,
        interlaced: interlace === 1,
      });
      const decoded = decodePng(png, LIMITS);
      const to8 = (v: number) => (bitDepth === 16 ? v >> 8 : Math.round((v * 255) / max));
      const colors = colorType === 0 || colorType === 4 ? 1 : 3;
      expect(decoded.colors).toBe(colors);
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const px = y * w + x;
          const got = [...decoded.color.subarray(px * colors, (px + 1) * colors)];
          const want =
            colorType === 3
              ? palette[sample(x, y, 0)]!
              : Array.from({ length: colors }, (_, c) => to8(sample(x, y, c)));
          expect(got, `pixel ${x},${y}`).toEqual(want);
          if (colorType === 4 || colorType === 6) {
            expect(decoded.alpha?.[px] ?? 255, `alpha ${x},${y}`).toBe(to8(sample(x, y, colors)));
          }
        }
      }
    },
  );

  it('applies tRNS: a transparent grey level, RGB colour, and palette alphas', () => {
    const grey = decodePng(
      encodePng({
        width: 4,
        height: 1,
        colorType: 0,
        bitDepth: 4,
        samples: (x) => [x * 5],
        trns: Buffer.from([0, 5]),
      }),
      LIMITS,
    );
    expect([...grey.alpha!]).toEqual([255, 0, 255, 255]);
    const rgb = decodePng(
      encodePng({
        width: 3,
        height: 1,
        colorType: 2,
        bitDepth: 16,
        samples: (x) => [x * 1000, 7, 300],
        trns: Buffer.from([0x03, 0xe8, 0, 7, 0x01, 0x2c]), // 1000, 7, 300
      }),
      LIMITS,
    );
    expect([...rgb.alpha!]).toEqual([255, 0, 255]);
    const indexed = decodePng(
      encodePng({
        width: 3,
        height: 1,
        colorType: 3,
        bitDepth: 2,
        samples: (x) => [x],
        palette: [
          [1, 2, 3],
          [4, 5, 6],
          [7, 8, 9],
        ],
        trns: Buffer.from([10]),
      }),
      LIMITS,
    );
    expect([...indexed.alpha!]).toEqual([10, 255, 255]);
    expect([...indexed.color]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('skips ancillary chunks, and accepts empty IDAT chunks among the others', async () => {
    const raw = scanlines(rgbaSpec(5, 5));
    const z = zlib.deflateSync(raw);
    const png = pngOf(
      ihdr(5, 5),
      chunk('tEXt', Buffer.from('Software\0Wathiq test')),
      chunk('IDAT', z.subarray(0, 10)),
      chunk('IDAT'),
      chunk('IDAT', z.subarray(10)),
      chunk('tIME', Buffer.alloc(7)),
      chunk('IEND'),
    );
    await expect(validatePng(png, LIMITS)).resolves.toMatchObject({ width: 5, height: 5 });
    expect(decodePng(png, LIMITS).width).toBe(5);
  });

  it('accepts a signature as the page sends it, and 4096 pixels on a side', async () => {
    const page = Buffer.from(TINY_PNG.slice('data:image/png;base64,'.length), 'base64');
    await expect(validatePng(page, LIMITS)).resolves.toMatchObject({ width: 40, height: 16 });
    await expect(validatePng(rgba(4096, 1), LIMITS)).resolves.toMatchObject({ width: 4096 });
    await expect(validatePng(rgba(1, 4096), LIMITS)).resolves.toMatchObject({ height: 4096 });
  });
});

describe('hostile and broken PNGs are refused, by the upload check and the decoder alike', () => {
  it('a decompression bomb: a 1×1 header over 300 MB of deflated zeros stops at the 5 bytes it implies', async () => {
    const bomb = pngOf(ihdr(1, 1), chunk('IDAT', await deflatedZeros(300 * 1024 * 1024)), chunk('IEND'));
    expect(bomb.length).toBeLessThan(400 * 1024);
    const { problem, message } = await refused(bomb);
    expect(problem).toBe('damaged');
    expect(message).toMatch(/inflates past the 5 bytes/);
  });

  it('a bomb with a plausible header (4096×4096) stops at the exact length too', async () => {
    const exact = 4096 * (1 + 4096 * 4);
    const bomb = pngOf(ihdr(4096, 4096), chunk('IDAT', await deflatedZeros(exact + 1)), chunk('IEND'));
    expect((await refused(bomb)).message).toMatch(new RegExp(`inflates past the ${exact} bytes`));
  });

  it('a chunk whose CRC does not match', async () => {
    const png = rgba(8, 8);
    const idat = png.indexOf('IDAT');
    png[idat + 6] = (png[idat + 6] as number) ^ 0xff; // a pixel-data byte, CRC left as it was
    expect(await refused(png)).toEqual({ problem: 'damaged', message: 'IDAT chunk fails its CRC' });
    const badIhdr = pngOf(
      chunk('IHDR', ihdr(8, 8).subarray(8, 21), 1234),
      idatOf(scanlines(rgbaSpec(8, 8))),
      chunk('IEND'),
    );
    expect((await refused(badIhdr)).message).toBe('IHDR chunk fails its CRC');
  });

  it('pixel data with good CRCs that inflates to too few or too many bytes', async () => {
    const raw = scanlines(rgbaSpec(8, 8));
    const short = pngOf(ihdr(8, 8), idatOf(raw.subarray(0, raw.length - 1)), chunk('IEND'));
    expect((await refused(short)).message).toMatch(/inflates to 263 bytes, not the 264/);
    const long = pngOf(ihdr(8, 8), idatOf(Buffer.concat([raw, Buffer.alloc(1)])), chunk('IEND'));
    expect((await refused(long)).message).toMatch(/inflates past the 264 bytes/);
  });

  it('pixel data that is not a zlib stream, a truncated stream, or data after the stream', async () => {
    const raw = scanlines(rgbaSpec(8, 8));
    const z = zlib.deflateSync(raw);
    const notZlib = pngOf(ihdr(8, 8), chunk('IDAT', Buffer.from('not zlib at all')), chunk('IEND'));
    expect((await refused(notZlib)).message).toMatch(/does not inflate/);
    const cut = pngOf(ihdr(8, 8), chunk('IDAT', z.subarray(0, z.length - 6)), chunk('IEND'));
    expect((await refused(cut)).problem).toBe('damaged');
    const badAdler = Buffer.from(z);
    badAdler[badAdler.length - 1] = (badAdler[badAdler.length - 1] as number) ^ 1;
    expect((await refused(pngOf(ihdr(8, 8), chunk('IDAT', badAdler), chunk('IEND')))).message).toMatch(
      /does not inflate/,
    );
    const after = pngOf(ihdr(8, 8), chunk('IDAT', Buffer.concat([z, Buffer.from('extra')])), chunk('IEND'));
    expect((await refused(after)).message).toBe('data after the end of the zlib stream');
  });

  it('a scanline with filter type 5', async () => {
    const raw = scanlines(rgbaSpec(8, 8));
    raw[3 * 33] = 5; // the fourth row's filter byte (rows are 1 + 32 bytes)
    expect((await refused(pngOf(ihdr(8, 8), idatOf(raw), chunk('IEND')))).message).toBe(
      'invalid filter type 5 on a scanline',
    );
  });

  it('two IHDR chunks, and IHDR not first', async () => {
    const idat = idatOf(scanlines(rgbaSpec(2, 2)));
    expect((await refused(pngOf(ihdr(2, 2), ihdr(2, 2), idat, chunk('IEND')))).message).toBe(
      'a second IHDR chunk',
    );
    expect((await refused(pngOf(ihdr(2, 2), idat, ihdr(2, 2), chunk('IEND')))).message).toBe(
      'a second IHDR chunk',
    );
    expect(
      (await refused(pngOf(chunk('tEXt', Buffer.from('a\0b')), ihdr(2, 2), idat, chunk('IEND')))).message,
    ).toBe('IHDR is not the first chunk');
    expect((await refused(pngOf(idat, chunk('IEND')))).message).toBe('IHDR is not the first chunk');
  });

  it('4097 pixels on a side is too large (a header alone decides: no pixels are inflated)', async () => {
    for (const [w, h] of [
      [4097, 1],
      [1, 4097],
      [4097, 4097],
    ] as const) {
      // The pixel data is not even there: the size is refused before it would matter.
      const png = pngOf(ihdr(w, h), chunk('IDAT', Buffer.from('x')), chunk('IEND'));
      expect(await refused(png)).toEqual({
        problem: 'too_large',
        message: `${w}×${h} pixels is larger than 4096×4096`,
      });
    }
    expect((await refused(rgba(101, 3), { maxSidePx: 100 })).problem).toBe('too_large');
    await expect(validatePng(rgba(100, 3), { maxSidePx: 100 })).resolves.toMatchObject({ width: 100 });
  });

  it('a file cut short anywhere', async () => {
    const png = rgba(16, 16);
    for (const length of [7, 8, 20, 33, 40, png.length - 20, png.length - 12, png.length - 1]) {
      const { problem, message } = await refused(png.subarray(0, length));
      expect(problem, `cut at ${length}: ${message}`).toBe(length < 8 ? 'not_png' : 'damaged');
    }
    expect((await refused(png.subarray(0, png.length - 12))).message).toBe('the file ends without IEND');
  });

  it('anything after IEND', async () => {
    const png = Buffer.concat([rgba(4, 4), Buffer.from('<?php echo 1; ?>')]);
    expect((await refused(png)).message).toBe('16 bytes after IEND');
    expect((await refused(Buffer.concat([rgba(4, 4), chunk('tEXt', Buffer.from('a\0b'))]))).message).toMatch(
      /bytes after IEND/,
    );
  });

  it('header fields the specification does not allow', async () => {
    const idat = idatOf(Buffer.alloc(2));
    const header = async (options: Parameters<typeof ihdr>[2], w = 1, h = 1) =>
      (await refused(pngOf(ihdr(w, h, options), idat, chunk('IEND')))).message;
    expect(await header({ colorType: 2, bitDepth: 4 })).toBe('bit depth 4 is not allowed with colour type 2');
    expect(await header({ colorType: 3, bitDepth: 16 })).toBe(
      'bit depth 16 is not allowed with colour type 3',
    );
    expect(await header({ colorType: 6, bitDepth: 1 })).toBe('bit depth 1 is not allowed with colour type 6');
    expect(await header({ colorType: 5 })).toBe('invalid colour type 5');
    expect(await header({ compression: 1 })).toBe('unknown compression method 1');
    expect(await header({ filter: 1 })).toBe('unknown filter method 1');
    expect(await header({ interlace: 2 })).toBe('unknown interlace method 2');
    expect(await header({}, 0, 1)).toBe('invalid dimensions 0×1');
    expect(await header({}, 2 ** 31, 1)).toBe(`invalid dimensions ${2 ** 31}×1`);
    const long = Buffer.concat([ihdr(1, 1).subarray(8, 21), Buffer.alloc(1)]);
    expect((await refused(pngOf(chunk('IHDR', long), idat, chunk('IEND')))).message).toBe(
      'IHDR of invalid length',
    );
  });

  it('IDAT chunks that are not contiguous, no IDAT, IEND with data, unknown critical chunks', async () => {
    const z = zlib.deflateSync(scanlines(rgbaSpec(4, 4)));
    const split = pngOf(
      ihdr(4, 4),
      chunk('IDAT', z.subarray(0, 8)),
      chunk('tEXt', Buffer.from('a\0b')),
      chunk('IDAT', z.subarray(8)),
      chunk('IEND'),
    );
    expect((await refused(split)).message).toBe('IDAT chunks are not contiguous');
    expect((await refused(pngOf(ihdr(4, 4), chunk('IEND')))).message).toBe('no IDAT chunk');
    expect(
      (await refused(pngOf(ihdr(4, 4), chunk('IDAT', z), chunk('IEND', Buffer.from('x'))))).message,
    ).toBe('IEND has data');
    expect((await refused(pngOf(ihdr(4, 4), chunk('ABCD'), chunk('IDAT', z), chunk('IEND')))).message).toBe(
      'unknown critical chunk ABCD',
    );
    expect((await refused(pngOf(ihdr(4, 4), chunk('abcd'), chunk('IDAT', z), chunk('IEND')))).message).toBe(
      'chunk abcd sets the reserved bit',
    );
    expect(
      (await refused(pngOf(ihdr(4, 4), chunk('ID@T'), chunk('IDAT', z), chunk('IEND')))).message,
    ).toMatch(/invalid chunk type/);
  });

  it('palette rules: PLTE required, in its place, of a valid size; indices within it', async () => {
    const spec: ImageSpec = {
      width: 4,
      height: 2,
      colorType: 3,
      bitDepth: 8,
      samples: (x) => [x % 2],
      palette: [
        [0, 0, 0],
        [255, 0, 0],
      ],
    };
    const idat = idatOf(scanlines(spec));
    const plte = chunk('PLTE', Buffer.from([0, 0, 0, 255, 0, 0]));
    const header = ihdr(4, 2, { colorType: 3 });
    const message = async (...chunks: Buffer[]) => (await refused(pngOf(...chunks))).message;
    expect(await message(header, idat, chunk('IEND'))).toBe('an indexed-colour image without PLTE');
    expect(await message(header, idat, plte, chunk('IEND'))).toBe('PLTE after IDAT');
    expect(await message(header, plte, plte, idat, chunk('IEND'))).toBe('a second PLTE chunk');
    expect(await message(header, chunk('PLTE', Buffer.alloc(4)), idat, chunk('IEND'))).toBe(
      'PLTE of invalid length',
    );
    expect(await message(ihdr(4, 2, { colorType: 0 }), plte, idat, chunk('IEND'))).toBe(
      'PLTE in a greyscale image',
    );
    expect(
      await message(
        ihdr(4, 2, { colorType: 3, bitDepth: 1 }),
        chunk('PLTE', Buffer.alloc(9)),
        idat,
        chunk('IEND'),
      ),
    ).toBe('PLTE has more entries than the bit depth can index');
    expect(await message(header, plte, chunk('tRNS', Buffer.alloc(3)), idat, chunk('IEND'))).toBe(
      'tRNS with more entries than the palette',
    );
    const outOfRange = idatOf(scanlines({ ...spec, samples: (x) => [x] })); // indices 2 and 3 of a 2-entry palette
    expect(await message(header, plte, outOfRange, chunk('IEND'))).toBe(
      'a pixel uses palette entry 2; the palette has 2',
    );
    await expect(validatePng(pngOf(header, plte, idat, chunk('IEND')), LIMITS)).resolves.toBeDefined();
  });

  it('what is not a PNG at all', async () => {
    for (const bytes of [
      Buffer.alloc(0),
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70]),
      Buffer.from('GIF89a...'),
    ]) {
      expect((await refused(bytes)).problem).toBe('not_png');
    }
  });
});

describe('MAX_IMAGE_SIDE_PX', () => {
  it('defaults to 4096 and is validated', () => {
    expect(loadConfig({}).images.maxSidePx).toBe(4096);
    expect(loadConfig({ MAX_IMAGE_SIDE_PX: '2000' }).images.maxSidePx).toBe(2000);
    for (const value of ['0', '8193', 'large', '1.5']) {
      expect(() => loadConfig({ MAX_IMAGE_SIDE_PX: value })).toThrow(ConfigError);
      expect(() => loadConfig({ MAX_IMAGE_SIDE_PX: value })).toThrow(/MAX_IMAGE_SIDE_PX/);
    }
  });
});
