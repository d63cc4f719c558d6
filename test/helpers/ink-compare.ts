import { deflateSync } from 'node:zlib';
import { chunk, ihdr, pngOf } from './png.ts';

/**
 * Compares two drawings of the same page by where their ink lies, so that two rasterizers (Chromium's Skia through
 * pdf.js, poppler's Splash) that antialias differently still agree, while glyphs drawn at other places do not.
 *
 * The reference's lines of text are found as bands of rows with ink (and, for rotated text, bands of columns) that
 * are far longer than they are thick.
 * Within each band the ink of each column is summed into a profile, which splits at empty columns into glyph
 * clusters (a letter, or letters that touch). Each cluster's centre of ink is compared between the drawings: it
 * moves by the distance the glyphs move, while a stroke drawn a little bolder or an edge antialiased a little
 * lighter in one drawing moves it by a fraction of a pixel. Glyphs drawn in another font (other widths), bunched
 * or spread, move it by pixels.
 */
export interface Gray {
  width: number;
  height: number;
  /** One byte a pixel, 0 black to 255 white, row by row. */
  pixels: Uint8Array;
}

export interface BandDifference {
  axis: 'rows' | 'columns';
  from: number;
  to: number;
  /** The largest shift, in pixels, of the centre of any of the band's glyph clusters. */
  shift: number;
  /** The band's ink in `drawn` over its ink in `reference`. */
  inkRatio: number;
  /** How long the band's line of text is, in pixels. */
  length: number;
}

const INK_THRESHOLD = 96; // darker than this (of 255) marks a row or column as holding text
/** Only what is darker than this counts as ink: text, not the light fills behind it (a tinted box, a band). */
const INK_FLOOR = 224;
/** A line of text is at least this many times longer than it is thick. */
const LINE_ASPECT = 4;
/** Fewer rows (or columns) than this are a stray edge, not a line of text. */
const MIN_BAND = 3;

const inkAt = (img: Gray, x: number, y: number) =>
  Math.max(0, INK_FLOOR - (img.pixels[y * img.width + x] ?? 255));

/** Runs of consecutive indexes whose `dark` is true, joined across gaps of `gap` or fewer. */
function runs(dark: boolean[], gap = 1): [number, number][] {
  const out: [number, number][] = [];
  let start = -1;
  let last = -1;
  dark.forEach((d, i) => {
    if (!d) return;
    if (start >= 0 && i - last <= gap + 1) last = i;
    else {
      if (start >= 0) out.push([start, last]);
      start = last = i;
    }
  });
  if (start >= 0) out.push([start, last]);
  return out;
}

/**
 * The reference's glyph clusters along a band (runs of columns with ink, split at empty columns), each with the
 * window it is measured in: from halfway to the previous cluster to halfway to the next.
 */
function clusters(profile: Float64Array): { window: [number, number] }[] {
  const segments = runs(
    Array.from(profile, (v) => v > 128),
    0,
  );
  return segments.map(([from, to], i) => {
    const before = segments[i - 1];
    const after = segments[i + 1];
    const lo = before ? Math.ceil((before[1] + from) / 2) : Math.max(0, from - 4);
    const hi = after ? Math.floor((to + after[0]) / 2) : Math.min(profile.length - 1, to + 4);
    return { window: [lo, hi] as [number, number] };
  });
}

/** The centre of the ink of `profile` between `lo` and `hi` (a glyph cluster's position), and how much ink there is. */
function centroid(profile: Float64Array, [lo, hi]: [number, number]): { at: number; ink: number } {
  let ink = 0;
  let moment = 0;
  for (let i = lo; i <= hi; i++) {
    ink += profile[i] ?? 0;
    moment += i * (profile[i] ?? 0);
  }
  return { at: ink > 0 ? moment / ink : NaN, ink };
}

function bandsOf(reference: Gray, drawn: Gray, axis: 'rows' | 'columns'): BandDifference[] {
  const across = axis === 'rows' ? reference.height : reference.width;
  const along = axis === 'rows' ? reference.width : reference.height;
  const at = (img: Gray, a: number, b: number) => (axis === 'rows' ? inkAt(img, b, a) : inkAt(img, a, b));
  const dark: boolean[] = [];
  for (let a = 0; a < across; a++) {
    let any = false;
    for (let b = 0; b < along && !any; b++) any = at(reference, a, b) > INK_FLOOR - INK_THRESHOLD;
    dark.push(any);
  }
  return runs(dark)
    .filter(([from, to]) => to - from + 1 >= MIN_BAND)
    .map(([from, to]) => {
      const lo = Math.max(0, from - 2);
      const hi = Math.min(across - 1, to + 2);
      const profiles = [reference, drawn].map((img) => {
        const p = new Float64Array(along);
        for (let a = lo; a <= hi; a++) for (let b = 0; b < along; b++) p[b] = (p[b] ?? 0) + at(img, a, b);
        return p;
      });
      const [refProfile, drawnProfile] = profiles as [Float64Array, Float64Array];
      // Only a line of text runs along the band (far longer than thick); across a line (a letter's height, where
      // Skia puts glyphs on whole pixels) is not where glyphs are placed one after another.
      const inked = Array.from(refProfile, (v, i) => (v > 128 ? i : -1)).filter((i) => i >= 0);
      const length = inked.length > 0 ? inked[inked.length - 1]! - inked[0]! + 1 : 0;
      if (length < LINE_ASPECT * (to - from + 1)) return undefined;
      let shift = 0;
      for (const { window } of clusters(refProfile)) {
        const r = centroid(refProfile, window);
        const d = centroid(drawnProfile, window);
        // A cluster with no ink in the drawing, or far more or less, is missing or misplaced: count it as far off.
        const off = d.ink < r.ink * 0.5 || d.ink > r.ink * 2 ? Infinity : Math.abs(r.at - d.at);
        shift = Math.max(shift, off);
      }
      const sum = (p: Float64Array) => p.reduce((x, y) => x + y, 0);
      const inkRatio = sum(drawnProfile) / Math.max(1, sum(refProfile));
      return { axis, from, to, shift, inkRatio, length };
    })
    .filter((band): band is BandDifference => band !== undefined);
}

/** Every line of text of the reference (along rows, or along columns on a turned page), with how far the drawing's glyphs moved in it. */
export function compareInk(reference: Gray, drawn: Gray): BandDifference[] {
  if (Math.abs(reference.width - drawn.width) > 1 || Math.abs(reference.height - drawn.height) > 1)
    throw new Error(
      `the drawings differ in size: ${reference.width}×${reference.height} and ${drawn.width}×${drawn.height}`,
    );
  const width = Math.min(reference.width, drawn.width);
  const height = Math.min(reference.height, drawn.height);
  const crop = (img: Gray): Gray => {
    if (img.width === width && img.height === height) return img;
    const pixels = new Uint8Array(width * height);
    for (let y = 0; y < height; y++)
      pixels.set(img.pixels.subarray(y * img.width, y * img.width + width), y * width);
    return { width, height, pixels };
  };
  const [r, d] = [crop(reference), crop(drawn)] as [Gray, Gray];
  // The page's lines run along rows, or (turned a quarter) along columns: whichever holds the most line.
  const [rows, columns] = [bandsOf(r, d, 'rows'), bandsOf(r, d, 'columns')];
  const total = (bands: BandDifference[]) => bands.reduce((sum, b) => sum + b.length, 0);
  return total(rows) >= total(columns) ? rows : columns;
}

/** A binary PGM (P5), as `pdftoppm -gray` writes it. */
export function readPgm(bytes: Buffer): Gray {
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(bytes.toString('latin1', 0, 64));
  if (!header || header[3] !== '255') throw new Error('not an 8-bit binary PGM');
  const width = Number(header[1]);
  const height = Number(header[2]);
  return {
    width,
    height,
    pixels: new Uint8Array(bytes.subarray(header[0].length, header[0].length + width * height)),
  };
}

/** A drawing as an 8-bit grey PNG, to look at when a comparison fails. */
export function grayPng(img: Gray): Buffer {
  const rows = Buffer.alloc((img.width + 1) * img.height);
  for (let y = 0; y < img.height; y++)
    rows.set(img.pixels.subarray(y * img.width, (y + 1) * img.width), y * (img.width + 1) + 1);
  return pngOf(
    ihdr(img.width, img.height, { colorType: 0 }),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND'),
  );
}
