import { createHash } from 'node:crypto';
import { PDFString, type PDFContext, type PDFRef } from 'pdf-lib';
import type { LoadedFont } from './fonts.ts';
import type { PlacedCluster } from './layout.ts';
import { type CompositeGlyph, buildFontProgram } from './subset-truetype.ts';
import { flateStream } from '../writer/flate.ts';

interface CidEntry {
  cid: number;
  /** An original glyph id, or -(1 + index) of a composite glyph. */
  glyph: number;
  /** Width in PDF glyph space (1000 units per em). */
  width: number;
  text: string;
}

interface FontUse {
  font: LoadedFont;
  ref: PDFRef;
  resourceName: string;
  cids: Map<string, CidEntry>;
  composites: Map<string, number>;
  compositeGlyphs: CompositeGlyph[];
}

/**
 * The fonts one PDF uses. Each LoadedFont becomes a Type0 font (CIDFontType2, Identity-H). Every shaped cluster
 * with its text gets its own CID: a plain glyph, or a composite glyph built from the cluster's glyphs (dotless
 * letter plus dots, marks, cursive offsets). The ToUnicode map then gives each CID exactly the text of its
 * cluster, so pdftotext and copy-paste see the logical Unicode text, and every character sits on the baseline.
 * Objects are written by `finish`, once every cluster is known.
 */
export class PdfFonts {
  private readonly uses = new Map<LoadedFont, FontUse>();

  constructor(
    private readonly context: PDFContext,
    private readonly namePrefix = 'WqF',
  ) {}

  /** Registers the clusters and returns the font's resource name and reference and each cluster's CID and width. */
  use(
    font: LoadedFont,
    clusters: readonly PlacedCluster[],
  ): { name: string; ref: PDFRef; cids: { cid: number; width: number }[] } {
    let use = this.uses.get(font);
    if (!use) {
      use = {
        font,
        ref: this.context.nextRef(),
        resourceName: `${this.namePrefix}${this.uses.size + 1}`,
        cids: new Map(),
        composites: new Map(),
        compositeGlyphs: [],
      };
      this.uses.set(font, use);
    }
    const k = 1000 / font.unitsPerEm;
    const cids = clusters.map((cluster) => {
      const { glyph, advance } = this.glyphFor(use, cluster);
      const key = `${glyph}|${cluster.text}`;
      let entry = use.cids.get(key);
      if (!entry) {
        if (use.cids.size >= 0xfffe) throw new Error('too many distinct glyphs for one font');
        entry = { cid: use.cids.size + 1, glyph, width: Math.round(advance * k), text: cluster.text };
        use.cids.set(key, entry);
      }
      return { cid: entry.cid, width: entry.width };
    });
    return { name: use.resourceName, ref: use.ref, cids };
  }

  /**
   * A lone glyph at the cluster origin is drawn as itself (kerning is left to TJ adjustments); anything else
   * becomes a composite glyph.
   */
  private glyphFor(use: FontUse, cluster: PlacedCluster): { glyph: number; advance: number } {
    const [only] = cluster.glyphs;
    if (cluster.glyphs.length === 1 && only && only.dx === 0 && only.dy === 0) {
      return { glyph: only.gid, advance: use.font.hbFont.glyphHAdvance(only.gid) };
    }
    const advance = Math.round(cluster.advance);
    const key = `${advance}:${cluster.glyphs.map((g) => `${g.gid},${g.dx},${g.dy}`).join(';')}`;
    let index = use.composites.get(key);
    if (index === undefined) {
      index = use.compositeGlyphs.length;
      use.compositeGlyphs.push({ components: cluster.glyphs.map((g) => ({ ...g })), advance });
      use.composites.set(key, index);
    }
    return { glyph: -(1 + index), advance };
  }

  finish(): void {
    for (const use of this.uses.values()) this.writeFont(use);
  }

  private writeFont(use: FontUse): void {
    const { context } = this;
    const { font } = use;
    const entries = [...use.cids.values()];
    const plain = entries.filter((e) => e.glyph >= 0).map((e) => e.glyph);
    const { program, firstCompositeGid } = buildFontProgram(font.sfnt, plain, use.compositeGlyphs);
    const gidOf = (e: CidEntry) => (e.glyph >= 0 ? e.glyph : firstCompositeGid + (-e.glyph - 1));

    const tag = subsetTag(font.key, program);
    const baseFont = `${tag}+${font.postScriptName}`;
    const k = 1000 / font.unitsPerEm;

    const fontFileRef = context.register(flateStream(context, program, { Length1: program.length }));
    const descriptorRef = context.register(
      context.obj({
        Type: 'FontDescriptor',
        FontName: baseFont,
        Flags: 4, // symbolic: the glyphs are not a standard Latin set
        FontBBox: font.bbox.map((v) => Math.round(v * k)),
        ItalicAngle: font.italicAngle,
        Ascent: Math.round(font.ascent * k),
        Descent: Math.round(font.descent * k),
        CapHeight: Math.round(font.capHeight * k),
        StemV: 80,
        FontFile2: fontFileRef,
      }),
    );

    const maxCid = entries.length;
    const cidToGid = Buffer.alloc((maxCid + 1) * 2);
    const widths: number[] = [];
    for (const e of entries) {
      cidToGid.writeUInt16BE(gidOf(e), e.cid * 2);
      widths[e.cid] = e.width;
    }
    const cidToGidRef = context.register(flateStream(context, cidToGid));

    const cidFontRef = context.register(
      context.obj({
        Type: 'Font',
        Subtype: 'CIDFontType2',
        BaseFont: baseFont,
        CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: 0 },
        FontDescriptor: descriptorRef,
        W: [1, widths.slice(1)],
        CIDToGIDMap: cidToGidRef,
      }),
    );

    const toUnicode = context.register(flateStream(context, toUnicodeCMap(entries)));
    context.assign(
      use.ref,
      context.obj({
        Type: 'Font',
        Subtype: 'Type0',
        BaseFont: baseFont,
        Encoding: 'Identity-H',
        DescendantFonts: [cidFontRef],
        ToUnicode: toUnicode,
      }),
    );
  }
}

/** Six capital letters that depend only on the font program (ISO 32000 9.6.4 subset tag). */
function subsetTag(key: string, program: Buffer): string {
  const digest = createHash('sha256').update(key).update(program).digest();
  return Array.from(digest.subarray(0, 6), (b) => String.fromCharCode(65 + (b % 26))).join('');
}

function toUnicodeCMap(entries: readonly CidEntry[]): string {
  const lines = entries
    .filter((e) => e.text !== '')
    .sort((a, b) => a.cid - b.cid)
    .map((e) => `<${hex4(e.cid)}> <${utf16Hex(e.text)}>`);
  const blocks: string[] = [];
  for (let i = 0; i < lines.length; i += 100) {
    const chunk = lines.slice(i, i + 100);
    blocks.push(`${chunk.length} beginbfchar\n${chunk.join('\n')}\nendbfchar`);
  }
  return [
    '/CIDInit /ProcSet findresource begin',
    '12 dict begin',
    'begincmap',
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def',
    '/CMapName /Adobe-Identity-UCS def',
    '/CMapType 2 def',
    '1 begincodespacerange',
    '<0000> <FFFF>',
    'endcodespacerange',
    ...blocks,
    'endcmap',
    'CMapName currentdict /CMap defineresource pop',
    'end',
    'end',
  ].join('\n');
}

export function hex4(n: number): string {
  return n.toString(16).toUpperCase().padStart(4, '0');
}

function utf16Hex(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += hex4(text.charCodeAt(i));
  return out;
}
