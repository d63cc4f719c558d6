import { buildSfnt, tableChecksum } from './woff.ts';

/** Tables a PDF TrueType font program needs (ISO 32000 9.9), plus the ones viewers like to see. */
const KEEP = new Set([
  'head',
  'hhea',
  'hmtx',
  'maxp',
  'loca',
  'glyf',
  'cvt ',
  'fpgm',
  'prep',
  'OS/2',
  'post',
  'name',
]);

export interface CompositeGlyph {
  /** Components in font units relative to the new glyph's origin. */
  components: { gid: number; dx: number; dy: number }[];
  /** Advance width in font units. */
  advance: number;
}

/**
 * Builds the font program a PDF embeds: the outlines of the glyphs used (and the components of composite glyphs),
 * every other original glyph left empty so glyph ids stay the same, plus new composite glyphs appended after the
 * original ones (their ids are `numGlyphs + i`). A composite glyph holds one shaped cluster (a letter and its
 * dots, marks and cursive offset) so text extraction sees one character on the baseline per cluster. Layout tables
 * are dropped: the text is already shaped.
 */
export function buildFontProgram(
  sfnt: Buffer,
  used: Iterable<number>,
  composites: readonly CompositeGlyph[],
): { program: Buffer; firstCompositeGid: number } {
  const font = openFont(sfnt);
  const keep = outlineClosure(font, used, composites);
  const glyphs = writeGlyphs(font, keep, composites);
  const total = font.numGlyphs + composites.length;

  const newHead = Buffer.from(font.head);
  newHead.writeInt16BE(1, 50);
  newHead.writeUInt32BE(0, 8);
  const newHhea = Buffer.from(font.hhea);
  newHhea.writeUInt16BE(total, 34);
  const replaced = new Map<string, Buffer>([
    ['head', newHead],
    ['hhea', newHhea],
    ['maxp', updatedMaxp(font.maxp, total, glyphs.maxima)],
    ['hmtx', glyphs.hmtx],
    ['loca', glyphs.loca],
    ['glyf', glyphs.glyf],
  ]);
  const out: { tag: string; data: Uint8Array }[] = [];
  for (const [tag, data] of font.tables) {
    if (!KEEP.has(tag)) continue;
    const replacement = replaced.get(tag);
    if (replacement) out.push({ tag, data: replacement });
    else if (tag === 'post' && data.length >= 32) {
      // Version 3: no glyph names (they would name glyphs that are no longer there).
      const post = Buffer.from(data.subarray(0, 32));
      post.writeUInt32BE(0x00030000, 0);
      out.push({ tag, data: post });
    } else out.push({ tag, data });
  }
  const program = buildSfnt(sfnt.readUInt32BE(0), out);
  // head.checkSumAdjustment makes the whole font sum to 0xB1B0AFBA.
  program.writeUInt32BE((0xb1b0afba - tableChecksum(program)) >>> 0, findTable(program, 'head') + 8);
  return { program, firstCompositeGid: font.numGlyphs };
}

interface Font {
  tables: Map<string, Buffer>;
  head: Buffer;
  maxp: Buffer;
  hhea: Buffer;
  numGlyphs: number;
  glyphData: (g: number) => Buffer;
  /** Every original glyph's advance and left side bearing, as a full hmtx (no repeated last advance). */
  metrics: Buffer;
}

interface Maxima {
  points: number;
  contours: number;
  components: number;
}

/**
 * The parsed font, once per face and thread: each document's subsets read the same tables, and the full metrics
 * would otherwise be rebuilt glyph by glyph for every font of every document.
 */
const opened = new WeakMap<Buffer, Font>();

function openFont(sfnt: Buffer): Font {
  let font = opened.get(sfnt);
  if (!font) {
    font = parseFont(sfnt);
    opened.set(sfnt, font);
  }
  return font;
}

function parseFont(sfnt: Buffer): Font {
  const tables = readTables(sfnt);
  const head = required(tables, 'head');
  const maxp = required(tables, 'maxp');
  const loca = required(tables, 'loca');
  const glyf = required(tables, 'glyf');
  const hhea = required(tables, 'hhea');
  const hmtx = required(tables, 'hmtx');
  const longLoca = head.readInt16BE(50) === 1;
  const offsetOf = (g: number) => (longLoca ? loca.readUInt32BE(g * 4) : loca.readUInt16BE(g * 2) * 2);
  const glyphData = (g: number) => glyf.subarray(offsetOf(g), offsetOf(g + 1));
  const numGlyphs = maxp.readUInt16BE(4);
  return { tables, head, maxp, hhea, numGlyphs, glyphData, metrics: fullMetrics(hhea, hmtx, numGlyphs) };
}

/** Every glyph drawn, directly or as a component of a composite (glyph 0 always). */
function outlineClosure(
  font: Font,
  used: Iterable<number>,
  composites: readonly CompositeGlyph[],
): Set<number> {
  const keep = new Set<number>([0]);
  const queue = [...used, ...composites.flatMap((c) => c.components.map((k) => k.gid))];
  while (queue.length > 0) {
    const g = queue.pop() as number;
    if (g < 0 || g >= font.numGlyphs) throw new Error(`glyph ${g} is not in the font`);
    if (keep.has(g) && g !== 0) continue;
    keep.add(g);
    for (const component of compositeComponents(font.glyphData(g)))
      if (!keep.has(component)) queue.push(component);
  }
  return keep;
}

/**
 * The new glyf, loca (long) and hmtx: kept glyphs as they were, the others empty, then the composites; and the
 * maxp maxima the composites raise.
 */
function writeGlyphs(
  font: Font,
  keep: Set<number>,
  composites: readonly CompositeGlyph[],
): { glyf: Buffer; loca: Buffer; hmtx: Buffer; maxima: Maxima } {
  const { numGlyphs, glyphData, maxp } = font;
  const total = numGlyphs + composites.length;
  if (total > 0xffff) throw new Error('too many glyphs for one font');
  const built = composites.map((c) => compositeGlyph(c, glyphData));
  const padded = (length: number) => (length + 3) & ~3;
  // One buffer each, sized first: the kept outlines, then the composites, each padded to 4 bytes with zeros.
  let size = 0;
  for (const g of keep) size += padded(glyphData(g).length);
  for (const b of built) size += padded(b.data.length);
  const glyf = Buffer.alloc(size);
  const loca = Buffer.alloc((total + 1) * 4);
  const hmtx = Buffer.alloc(total * 4);
  font.metrics.copy(hmtx);
  let offset = 0;
  for (let g = 0; g < numGlyphs; g++) {
    loca.writeUInt32BE(offset, g * 4);
    if (!keep.has(g)) continue;
    const data = glyphData(g);
    glyf.set(data, offset);
    offset += padded(data.length);
  }

  const full = maxp.length >= 32;
  const maxima: Maxima = {
    components: full ? maxp.readUInt16BE(28) : 0,
    points: full ? maxp.readUInt16BE(10) : 0,
    contours: full ? maxp.readUInt16BE(12) : 0,
  };
  composites.forEach((c, i) => {
    const { data, xMin } = built[i]!;
    const g = numGlyphs + i;
    loca.writeUInt32BE(offset, g * 4);
    hmtx.writeUInt16BE(Math.max(0, Math.min(0xffff, Math.round(c.advance))), g * 4);
    hmtx.writeInt16BE(xMin, g * 4 + 2);
    glyf.set(data, offset);
    offset += padded(data.length);
    maxima.components = Math.max(maxima.components, c.components.length);
    const counts = c.components.map((k) => pointCounts(k.gid, glyphData));
    maxima.points = Math.min(
      0xffff,
      Math.max(
        maxima.points,
        counts.reduce((s, k) => s + k.points, 0),
      ),
    );
    maxima.contours = Math.min(
      0xffff,
      Math.max(
        maxima.contours,
        counts.reduce((s, k) => s + k.contours, 0),
      ),
    );
  });
  loca.writeUInt32BE(offset, total * 4);
  return { glyf, loca, hmtx, maxima };
}

/** Advance width and left side bearing of every glyph from the original hmtx (the last advance repeats). */
function fullMetrics(hhea: Buffer, hmtx: Buffer, numGlyphs: number): Buffer {
  const numberOfHMetrics = hhea.readUInt16BE(34);
  const out = Buffer.alloc(numGlyphs * 4);
  for (let g = 0; g < numGlyphs; g++) {
    const i = Math.min(g, numberOfHMetrics - 1);
    out.writeUInt16BE(hmtx.readUInt16BE(i * 4), g * 4);
    out.writeInt16BE(
      g < numberOfHMetrics
        ? hmtx.readInt16BE(g * 4 + 2)
        : hmtx.readInt16BE(numberOfHMetrics * 4 + (g - numberOfHMetrics) * 2),
      g * 4 + 2,
    );
  }
  return out;
}

function updatedMaxp(maxp: Buffer, total: number, maxima: Maxima): Buffer {
  const out = Buffer.from(maxp);
  out.writeUInt16BE(total, 4);
  if (out.length >= 32) {
    out.writeUInt16BE(maxima.points, 10);
    out.writeUInt16BE(maxima.contours, 12);
    out.writeUInt16BE(maxima.components, 28);
    out.writeUInt16BE(Math.max(2, out.readUInt16BE(30) + 1), 30);
  }
  return out;
}

/** Component glyph ids of a composite glyph (OpenType glyf, "Composite Glyph Description"); [] for others. */
function compositeComponents(data: Buffer): number[] {
  if (data.length < 10 || data.readInt16BE(0) >= 0) return [];
  const out: number[] = [];
  let p = 10;
  for (;;) {
    const flags = data.readUInt16BE(p);
    out.push(data.readUInt16BE(p + 2));
    p += 4 + (flags & 0x0001 ? 4 : 2);
    if (flags & 0x0008) p += 2;
    else if (flags & 0x0040) p += 4;
    else if (flags & 0x0080) p += 8;
    if (!(flags & 0x0020)) return out;
  }
}

function compositeGlyph(c: CompositeGlyph, glyphData: (g: number) => Buffer): { data: Buffer; xMin: number } {
  const parts = c.components.filter((k) => glyphData(k.gid).length >= 10);
  if (parts.length === 0) return { data: Buffer.alloc(0), xMin: 0 };
  let xMin = Infinity;
  let yMin = Infinity;
  let xMax = -Infinity;
  let yMax = -Infinity;
  for (const k of parts) {
    const d = glyphData(k.gid);
    xMin = Math.min(xMin, d.readInt16BE(2) + k.dx);
    yMin = Math.min(yMin, d.readInt16BE(4) + k.dy);
    xMax = Math.max(xMax, d.readInt16BE(6) + k.dx);
    yMax = Math.max(yMax, d.readInt16BE(8) + k.dy);
  }
  const data = Buffer.alloc(10 + parts.length * 8);
  data.writeInt16BE(-1, 0);
  data.writeInt16BE(xMin, 2);
  data.writeInt16BE(yMin, 4);
  data.writeInt16BE(xMax, 6);
  data.writeInt16BE(yMax, 8);
  parts.forEach((k, i) => {
    const p = 10 + i * 8;
    // ARG_1_AND_2_ARE_WORDS | ARGS_ARE_XY_VALUES | MORE_COMPONENTS (all but the last)
    data.writeUInt16BE(0x0001 | 0x0002 | (i < parts.length - 1 ? 0x0020 : 0), p);
    data.writeUInt16BE(k.gid, p + 2);
    data.writeInt16BE(Math.round(k.dx), p + 4);
    data.writeInt16BE(Math.round(k.dy), p + 6);
  });
  return { data, xMin };
}

function pointCounts(
  g: number,
  glyphData: (g: number) => Buffer,
  depth = 0,
): { points: number; contours: number } {
  const d = glyphData(g);
  if (d.length < 10 || depth > 8) return { points: 0, contours: 0 };
  const n = d.readInt16BE(0);
  if (n >= 0) return { points: n === 0 ? 0 : d.readUInt16BE(10 + 2 * (n - 1)) + 1, contours: n };
  return compositeComponents(d)
    .map((k) => pointCounts(k, glyphData, depth + 1))
    .reduce((a, b) => ({ points: a.points + b.points, contours: a.contours + b.contours }), {
      points: 0,
      contours: 0,
    });
}

function required(tables: Map<string, Buffer>, tag: string): Buffer {
  const t = tables.get(tag);
  if (!t) throw new Error(`not a TrueType (glyf) font: no ${tag} table`);
  return t;
}

function readTables(sfnt: Buffer): Map<string, Buffer> {
  const n = sfnt.readUInt16BE(4);
  const map = new Map<string, Buffer>();
  for (let i = 0; i < n; i++) {
    const dir = 12 + 16 * i;
    const offset = sfnt.readUInt32BE(dir + 8);
    map.set(
      sfnt.toString('latin1', dir, dir + 4),
      sfnt.subarray(offset, offset + sfnt.readUInt32BE(dir + 12)),
    );
  }
  return map;
}

function findTable(sfnt: Buffer, tag: string): number {
  const n = sfnt.readUInt16BE(4);
  for (let i = 0; i < n; i++) {
    const dir = 12 + 16 * i;
    if (sfnt.toString('latin1', dir, dir + 4) === tag) return sfnt.readUInt32BE(dir + 8);
  }
  throw new Error(`no ${tag} table`);
}
