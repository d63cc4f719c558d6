import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as hb from 'harfbuzzjs';
import { woffToSfnt } from './woff.ts';

export type FontWeight = 'regular' | 'bold';

/** One sfnt face, ready for HarfBuzz shaping and for embedding in a PDF. */
export interface LoadedFont {
  /** Stable key, also the basis of the PDF resource name. */
  key: string;
  postScriptName: string;
  sfnt: Buffer;
  hbFont: hb.Font;
  unicodes: ReadonlySet<number>;
  unitsPerEm: number;
  ascent: number;
  descent: number;
  capHeight: number;
  bbox: [number, number, number, number];
  italicAngle: number;
  /** True when the face is meant for Arabic script; preferred for right-to-left runs. */
  arabic: boolean;
}

/** Faces tried in order for a character; the first that maps it wins (Arabic faces first for RTL runs). */
export interface FontSet {
  regular: LoadedFont[];
  bold: LoadedFont[];
}

/**
 * Open-licence (SIL OFL 1.1) fonts from npm: Noto Sans for Latin and Noto Naskh Arabic for Arabic, in the unicode
 * subsets fontsource publishes.
 */
const FACES: Record<FontWeight, { key: string; file: string; psName: string; arabic: boolean }[]> = {
  regular: [
    {
      key: 'NotoSans-Regular',
      file: '@fontsource/noto-sans/files/noto-sans-latin-400-normal.woff',
      psName: 'NotoSans-Regular',
      arabic: false,
    },
    {
      key: 'NotoNaskhArabic-Regular',
      file: '@fontsource/noto-naskh-arabic/files/noto-naskh-arabic-arabic-400-normal.woff',
      psName: 'NotoNaskhArabic-Regular',
      arabic: true,
    },
    {
      key: 'NotoSansLatinExt-Regular',
      file: '@fontsource/noto-sans/files/noto-sans-latin-ext-400-normal.woff',
      psName: 'NotoSans-Regular',
      arabic: false,
    },
  ],
  bold: [
    {
      key: 'NotoSans-Bold',
      file: '@fontsource/noto-sans/files/noto-sans-latin-700-normal.woff',
      psName: 'NotoSans-Bold',
      arabic: false,
    },
    {
      key: 'NotoNaskhArabic-Bold',
      file: '@fontsource/noto-naskh-arabic/files/noto-naskh-arabic-arabic-700-normal.woff',
      psName: 'NotoNaskhArabic-Bold',
      arabic: true,
    },
    {
      key: 'NotoSansLatinExt-Bold',
      file: '@fontsource/noto-sans/files/noto-sans-latin-ext-700-normal.woff',
      psName: 'NotoSans-Bold',
      arabic: false,
    },
  ],
};

let cached: Promise<FontSet> | undefined;

/** Loads (once per process: the faces are immutable) the fonts the final PDF is written in. */
export function loadFontSet(): Promise<FontSet> {
  cached ??= (async () => {
    const require = createRequire(import.meta.url);
    const load = async (weight: FontWeight) =>
      Promise.all(
        FACES[weight].map(async (f) =>
          openFont(f.key, f.psName, f.arabic, woffToSfnt(await readFile(require.resolve(f.file)))),
        ),
      );
    return { regular: await load('regular'), bold: await load('bold') };
  })();
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}

export function openFont(key: string, postScriptName: string, arabic: boolean, sfnt: Buffer): LoadedFont {
  const face = new hb.Face(new hb.Blob(sfnt));
  const hbFont = new hb.Font(face);
  const head = table(face, 'head');
  const hhea = table(face, 'hhea');
  const os2 = face.referenceTable('OS/2');
  const post = face.referenceTable('post');
  const unitsPerEm = head.readUInt16BE(18);
  const ascent = hhea.readInt16BE(4);
  const descent = hhea.readInt16BE(6);
  const os2b = os2 ? Buffer.from(os2) : undefined;
  const capHeight =
    os2b && os2b.readUInt16BE(0) >= 2 && os2b.length >= 90 ? os2b.readInt16BE(88) : Math.round(ascent * 0.7);
  const italicAngle = post ? Buffer.from(post).readInt32BE(4) / 65536 : 0;
  return {
    key,
    postScriptName,
    sfnt,
    hbFont,
    unicodes: new Set(face.collectUnicodes()),
    unitsPerEm,
    ascent,
    descent,
    capHeight,
    bbox: [head.readInt16BE(36), head.readInt16BE(38), head.readInt16BE(40), head.readInt16BE(42)],
    italicAngle,
    arabic,
  };
}

function table(face: hb.Face, tag: string): Buffer {
  const t = face.referenceTable(tag);
  if (!t) throw new Error(`font has no ${tag} table`);
  return Buffer.from(t);
}
