import bidiModule, { type Bidi } from 'bidi-js';
import * as hb from 'harfbuzzjs';
import type { LoadedFont } from './fonts.ts';

// bidi-js is CommonJS whose module.exports is the factory; its typings describe an ES default export.
const bidi = (bidiModule as unknown as () => Bidi)();

export type BaseDirection = 'ltr' | 'rtl' | 'auto';

/**
 * One shaped cluster (a character or a ligature, with its marks and dots), placed relative to the line's left end
 * on the baseline. Its glyphs are positioned relative to the cluster origin in font units; the PDF draws each
 * cluster as one glyph so text extraction sees one character per cluster on a single baseline.
 */
export interface PlacedCluster {
  /** x of the cluster origin, in points from the line's left end. */
  x: number;
  /** Glyphs and their offsets from the origin, in font units. */
  glyphs: { gid: number; dx: number; dy: number }[];
  /** Advance in font units. */
  advance: number;
  /** The characters this cluster stands for, in logical order. */
  text: string;
}

export interface GlyphRun {
  font: LoadedFont;
  size: number;
  clusters: PlacedCluster[];
}

export interface LineLayout {
  /** Advance width in points. */
  width: number;
  /** Runs in visual order, left to right. */
  runs: GlyphRun[];
  /** Resolved paragraph direction: decides alignment when the caller asked for 'auto'. */
  rtl: boolean;
}

interface LogicalRun {
  start: number;
  end: number; // exclusive, UTF-16 index
  level: number;
  font: LoadedFont;
}

/**
 * Lays out one line of text: Unicode bidi (UAX #9) for the visual order of runs, font fallback per character, and
 * HarfBuzz for shaping each run (Arabic joining, lam-alef ligatures, marks, kerning).
 */
export function layoutLine(
  input: string,
  fonts: readonly LoadedFont[],
  size: number,
  direction: BaseDirection = 'auto',
): LineLayout {
  let setId = fontSetIds.get(fonts);
  if (setId === undefined) {
    setId = fontSetIds.size + 1;
    fontSetIds.set(fonts, setId);
  }
  const key = `${setId}|${size}|${direction}|${input}`;
  const cached = layoutCache.get(key);
  if (cached) return cached;
  const line = computeLayout(input, fonts, size, direction);
  if (layoutCache.size >= LAYOUT_CACHE_LIMIT) layoutCache.clear();
  layoutCache.set(key, line);
  return line;
}

/**
 * Layouts are pure functions of their inputs and never mutated, and certificates repeat the same labels and
 * values many times (measured, then drawn): a bounded memo saves most of the shaping work.
 */
const layoutCache = new Map<string, LineLayout>();
const LAYOUT_CACHE_LIMIT = 20_000;
const fontSetIds = new Map<readonly LoadedFont[], number>();

function computeLayout(
  input: string,
  fonts: readonly LoadedFont[],
  size: number,
  direction: BaseDirection,
): LineLayout {
  const text = cleanText(input);
  if (text === '') return { width: 0, runs: [], rtl: direction === 'rtl' };
  const levels = bidi.getEmbeddingLevels(text, direction);
  const paragraphLevel = levels.paragraphs[0]?.level ?? 0;
  const logical = logicalRuns(text, levels.levels, fonts);
  if (logical.length === 0) return { width: 0, runs: [], rtl: paragraphLevel % 2 === 1 };

  // UAX #9 rule L2: from the highest level down to the lowest odd level, reverse every maximal sequence of runs
  // at that level or higher.
  const visual = [...logical];
  const maxLevel = Math.max(...visual.map((r) => r.level));
  const minOdd = Math.min(...visual.map((r) => (r.level % 2 === 1 ? r.level : r.level + 1)));
  for (let level = maxLevel; level >= minOdd; level--) {
    for (let i = 0; i < visual.length;) {
      if ((visual[i]?.level ?? 0) < level) {
        i++;
        continue;
      }
      let j = i;
      while (j < visual.length && (visual[j]?.level ?? 0) >= level) j++;
      visual.splice(i, j - i, ...visual.slice(i, j).reverse());
      i = j;
    }
  }

  const runs: GlyphRun[] = [];
  let pen = 0;
  for (const run of visual) {
    const shaped = shapeRun(text, run, size, pen);
    runs.push(shaped.run);
    pen = shaped.pen;
  }
  return { width: pen, runs, rtl: paragraphLevel % 2 === 1 };
}

/** Width in points of a line laid out as above. */
export function measure(
  text: string,
  fonts: readonly LoadedFont[],
  size: number,
  direction: BaseDirection = 'auto',
): number {
  return layoutLine(text, fonts, size, direction).width;
}

/**
 * Breaks text into lines no wider than maxWidth (in logical order): at spaces where possible, and inside words
 * that are wider than a line on their own (user agents, message ids).
 */
export function wrapText(
  input: string,
  fonts: readonly LoadedFont[],
  size: number,
  maxWidth: number,
  direction: BaseDirection = 'auto',
): string[] {
  const lines: string[] = [];
  for (const paragraph of input.split(/\r?\n/)) {
    const clean = cleanText(paragraph);
    if (measure(clean, fonts, size, direction) <= maxWidth) {
      lines.push(clean);
      continue;
    }
    // Arabic letters do not join across spaces, so a line's width is close to the sum of its words' widths;
    // a small margin absorbs kerning across the spaces.
    const space = measure('a a', fonts, size, direction) - 2 * measure('a', fonts, size, direction);
    const words = clean.split(' ').filter((w) => w !== '');
    let line = '';
    let width = 0;
    for (const word of words) {
      const w = measure(word, fonts, size, direction);
      if (line !== '' && width + space + w <= maxWidth - 0.5) {
        line = `${line} ${word}`;
        width += space + w;
        continue;
      }
      if (line !== '') lines.push(line);
      line = word;
      width = w;
      while (measure(line, fonts, size, direction) > maxWidth) {
        const cut = longestFittingPrefix(line, fonts, size, maxWidth, direction);
        lines.push(line.slice(0, cut));
        line = line.slice(cut);
      }
      width = measure(line, fonts, size, direction);
    }
    if (line !== '' || lines.length === 0) lines.push(line);
  }
  return lines;
}

function longestFittingPrefix(
  word: string,
  fonts: readonly LoadedFont[],
  size: number,
  maxWidth: number,
  direction: BaseDirection,
): number {
  const points = [...word];
  let lo = 1;
  let hi = points.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(points.slice(0, mid).join(''), fonts, size, direction) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return points.slice(0, Math.max(1, lo)).join('').length;
}

/** Control characters and line breaks become spaces; runs of spaces collapse; NFC so fonts find composed forms. */
export function cleanText(text: string): string {
  return (
    text
      .normalize('NFC')
      // eslint-disable-next-line no-control-regex -- removing control characters is the point
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ')
      .replace(/ {2,}/g, ' ')
      .trim()
  );
}

const ARABIC_SCRIPT = /[\u0600-\u06ff\u0750-\u077f\u0870-\u08ff\ufb50-\ufdff\ufe70-\ufeff]/u;
const MARK = /\p{M}/u;
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

function logicalRuns(text: string, levels: Uint8Array, fonts: readonly LoadedFont[]): LogicalRun[] {
  const runs: LogicalRun[] = [];
  const arabicFirst = [...fonts.filter((f) => f.arabic), ...fonts.filter((f) => !f.arabic)];
  const latinFirst = [...fonts.filter((f) => !f.arabic), ...fonts.filter((f) => f.arabic)];
  let previous: LoadedFont | undefined;
  let broken = false;
  for (let i = 0; i < text.length;) {
    const cp = text.codePointAt(i) ?? 0xfffd;
    const ch = String.fromCodePoint(cp);
    const level = levels[i] ?? 0;
    if (BIDI_CONTROL.test(ch)) {
      // Rule X9: explicit formatting characters are removed once their levels are resolved.
      broken = true;
      i += ch.length;
      continue;
    }
    let font: LoadedFont | undefined;
    if (MARK.test(ch) && previous?.unicodes.has(cp)) font = previous;
    else {
      const order = ARABIC_SCRIPT.test(ch) || level % 2 === 1 ? arabicFirst : latinFirst;
      font = order.find((f) => f.unicodes.has(cp));
    }
    font ??= previous ?? latinFirst[0];
    if (!font) throw new Error('no fonts to lay out text with');
    const last = runs[runs.length - 1];
    if (last && !broken && last.level === level && last.font === font) last.end = i + ch.length;
    else runs.push({ start: i, end: i + ch.length, level, font });
    broken = false;
    previous = font;
    i += ch.length;
  }
  return runs;
}

function shapeRun(
  text: string,
  run: LogicalRun,
  size: number,
  startPen: number,
): { run: GlyphRun; pen: number } {
  const runText = text.slice(run.start, run.end);
  const buffer = new hb.Buffer();
  buffer.addText(runText);
  buffer.setDirection(run.level % 2 === 1 ? hb.Direction.RTL : hb.Direction.LTR);
  buffer.guessSegmentProperties();
  // Marks stay in their base's cluster: one drawn glyph per grapheme.
  buffer.setClusterLevel(hb.ClusterLevel.MONOTONE_GRAPHEMES);
  hb.shape(run.font.hbFont, buffer);
  const infos = buffer.getGlyphInfos();
  const positions = buffer.getGlyphPositions();

  const clusterStarts = [...new Set(infos.map((g) => g.cluster))].sort((a, b) => a - b);
  const clusterEnd = new Map<number, number>();
  clusterStarts.forEach((c, i) => clusterEnd.set(c, clusterStarts[i + 1] ?? runText.length));

  const scale = size / run.font.unitsPerEm;
  let pen = 0; // font units from the run's start
  const clusters: PlacedCluster[] = [];
  let current: PlacedCluster | undefined;
  let currentId = -1;
  let origin = 0;
  infos.forEach((info, i) => {
    const pos = positions[i] ?? { xAdvance: 0, yAdvance: 0, xOffset: 0, yOffset: 0 };
    if (!current || info.cluster !== currentId) {
      origin = pen;
      currentId = info.cluster;
      current = {
        x: startPen + pen * scale,
        glyphs: [],
        advance: 0,
        text: runText.slice(info.cluster, clusterEnd.get(info.cluster)),
      };
      clusters.push(current);
    }
    current.glyphs.push({ gid: info.codepoint, dx: pen - origin + pos.xOffset, dy: pos.yOffset });
    current.advance += pos.xAdvance;
    pen += pos.xAdvance;
  });
  const placed = run.level % 2 === 1 ? clusters.flatMap((c) => splitRtlCluster(c, scale)) : clusters;
  return { run: { font: run.font, size, clusters: placed }, pen: startPen + pen * scale };
}

/**
 * A right-to-left cluster that stands for several characters (a letter with shadda, a ligature) is drawn as one
 * glyph followed by empty glyphs, one per character, each a slice of the cluster's advance in right-to-left order.
 * Text extractors that reverse right-to-left text glyph by glyph (poppler) then keep the characters in logical
 * order, where a single glyph mapping to "قّ" would come out with its mark in front.
 */
function splitRtlCluster(cluster: PlacedCluster, scale: number): PlacedCluster[] {
  const chars = [...cluster.text];
  if (chars.length < 2) return [cluster];
  const slice = cluster.advance / chars.length;
  // Visual order, left to right: the last character first. The leftmost piece carries the drawing.
  return chars.reverse().map((text, i) => ({
    x: cluster.x + i * slice * scale,
    glyphs: i === 0 ? cluster.glyphs : [],
    advance: slice,
    text,
  }));
}
