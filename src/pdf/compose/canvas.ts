import { PDFDict, PDFName, type PDFContext, type PDFRef } from 'pdf-lib';
import type { FontSet, FontWeight } from '../text/fonts.ts';
import { type BaseDirection, type LineLayout, layoutLine, wrapText } from '../text/layout.ts';
import { type PdfFonts, hex4 } from '../text/pdf-fonts.ts';

export type Rgb = readonly [number, number, number];

export interface TextStyle {
  size: number;
  weight?: FontWeight;
  color?: Rgb;
  direction?: BaseDirection;
}

/** Everything a page's drawing needs that outlives one page: the fonts of the document. */
export interface Typesetter {
  fontSet: FontSet;
  pdfFonts: PdfFonts;
}

/** A number as a PDF operand: at most three decimals, no exponent. */
export function num(v: number): string {
  const r = Math.round(v * 1000) / 1000;
  return Object.is(r, -0) ? '0' : String(r);
}

/**
 * Collects content-stream operators and the resources they name for one page, then writes both into the page.
 * Coordinates are PDF points with the origin at the bottom left.
 */
export class PageCanvas {
  private readonly ops: string[] = [];
  private readonly fonts = new Map<string, PDFRef>();
  private readonly xObjects = new Map<string, PDFRef>();
  private readonly extGStates = new Map<string, PDFRef>();

  constructor(
    readonly typesetter: Typesetter,
    private readonly resourcePrefix = 'Wq',
  ) {}

  raw(op: string): this {
    this.ops.push(op);
    return this;
  }

  layout(text: string, style: TextStyle): LineLayout {
    return layoutLine(text, this.fontsFor(style), style.size, style.direction ?? 'auto');
  }

  wrap(text: string, style: TextStyle, width: number): string[] {
    return wrapText(text, this.fontsFor(style), style.size, width, style.direction ?? 'auto');
  }

  /** Draws a laid-out line with its left end at x on baseline y. */
  drawLine(line: LineLayout, x: number, y: number, color: Rgb = [0, 0, 0]): this {
    if (line.runs.length === 0) return this;
    const parts: string[] = [`${color.map(num).join(' ')} rg`, 'BT'];
    for (const run of line.runs) {
      const first = run.clusters[0];
      if (!first) continue;
      const { name, ref, cids } = this.typesetter.pdfFonts.use(run.font, run.clusters);
      this.fonts.set(name, ref);
      const unit = run.size / 1000;
      parts.push(`/${name} ${num(run.size)} Tf`, `1 0 0 1 ${num(x + first.x)} ${num(y)} Tm`);
      // Every cluster sits on the baseline; TJ adjustments carry the shaped advances (kerning, cursive joins).
      const items: string[] = [];
      let hexRun = '';
      let pen = first.x;
      run.clusters.forEach((cluster, i) => {
        const adjust = Math.round(((pen - cluster.x) / unit) * 100) / 100;
        if (adjust !== 0) {
          if (hexRun) items.push(`<${hexRun}>`);
          hexRun = '';
          items.push(num(adjust));
          pen -= adjust * unit;
        }
        const { cid, width } = cids[i] ?? { cid: 0, width: 0 };
        hexRun += hex4(cid);
        pen += width * unit;
      });
      if (hexRun) items.push(`<${hexRun}>`);
      parts.push(`[${items.join(' ')}] TJ`);
    }
    parts.push('ET');
    this.ops.push(parts.join('\n'));
    return this;
  }

  /**
   * Draws each cluster of a line with its own text matrix (text along a curve). `place` receives the cluster's
   * centre along the line and its advance, in points, and returns the Tm operator for the cluster's origin.
   */
  placeClusters(line: LineLayout, place: (xCenter: number, advance: number) => string, color: Rgb): this {
    const parts: string[] = [`${color.map(num).join(' ')} rg`, 'BT'];
    for (const run of line.runs) {
      if (run.clusters.length === 0) continue;
      const { name, ref, cids } = this.typesetter.pdfFonts.use(run.font, run.clusters);
      this.fonts.set(name, ref);
      parts.push(`/${name} ${num(run.size)} Tf`);
      run.clusters.forEach((cluster, i) => {
        const { cid, width } = cids[i] ?? { cid: 0, width: 0 };
        const advance = (width * run.size) / 1000;
        parts.push(place(cluster.x + advance / 2, advance), `<${hex4(cid)}> Tj`);
      });
    }
    parts.push('ET');
    this.ops.push(parts.join('\n'));
    return this;
  }

  /**
   * Draws one line of text aligned in a box of the given width: 'start' is the left for left-to-right text and
   * the right for right-to-left text. Returns the width drawn.
   */
  text(
    text: string,
    x: number,
    y: number,
    style: TextStyle,
    opts: { width?: number; align?: 'start' | 'end' | 'left' | 'right' | 'center' } = {},
  ): number {
    const line = this.layout(text, style);
    const width = opts.width ?? line.width;
    const align = opts.align ?? 'start';
    const side =
      align === 'center'
        ? 'center'
        : align === 'left' || align === 'right'
          ? align
          : (align === 'start') !== line.rtl
            ? 'left'
            : 'right';
    const left =
      side === 'left' ? x : side === 'right' ? x + width - line.width : x + (width - line.width) / 2;
    this.drawLine(line, left, y, style.color);
    return line.width;
  }

  rect(
    x: number,
    y: number,
    w: number,
    h: number,
    opts: { fill?: Rgb; stroke?: Rgb; lineWidth?: number; dash?: number[] } = {},
  ): this {
    const parts = ['q'];
    if (opts.fill) parts.push(`${opts.fill.map(num).join(' ')} rg`);
    if (opts.stroke) parts.push(`${opts.stroke.map(num).join(' ')} RG ${num(opts.lineWidth ?? 0.75)} w`);
    if (opts.dash) parts.push(`[${opts.dash.map(num).join(' ')}] 0 d`);
    parts.push(`${num(x)} ${num(y)} ${num(w)} ${num(h)} re`);
    parts.push(opts.fill && opts.stroke ? 'B' : opts.fill ? 'f' : 'S', 'Q');
    this.ops.push(parts.join(' '));
    return this;
  }

  line(x1: number, y1: number, x2: number, y2: number, color: Rgb, lineWidth = 0.5): this {
    this.ops.push(
      `q ${color.map(num).join(' ')} RG ${num(lineWidth)} w ${num(x1)} ${num(y1)} m ${num(x2)} ${num(y2)} l S Q`,
    );
    return this;
  }

  /** A circle as four Bézier arcs. */
  circle(cx: number, cy: number, r: number, color: Rgb, lineWidth: number): this {
    const k = 0.5523 * r;
    this.ops.push(
      [
        `q ${color.map(num).join(' ')} RG ${num(lineWidth)} w`,
        `${num(cx + r)} ${num(cy)} m`,
        `${num(cx + r)} ${num(cy + k)} ${num(cx + k)} ${num(cy + r)} ${num(cx)} ${num(cy + r)} c`,
        `${num(cx - k)} ${num(cy + r)} ${num(cx - r)} ${num(cy + k)} ${num(cx - r)} ${num(cy)} c`,
        `${num(cx - r)} ${num(cy - k)} ${num(cx - k)} ${num(cy - r)} ${num(cx)} ${num(cy - r)} c`,
        `${num(cx + k)} ${num(cy - r)} ${num(cx + r)} ${num(cy - k)} ${num(cx + r)} ${num(cy)} c`,
        'S Q',
      ].join('\n'),
    );
    return this;
  }

  /** Paints an image XObject into the rectangle (x, y, w, h). */
  image(ref: PDFRef, x: number, y: number, w: number, h: number): this {
    const name = `${this.resourcePrefix}Im${this.xObjects.size + 1}`;
    this.xObjects.set(name, ref);
    this.ops.push(`q ${num(w)} 0 0 ${num(h)} ${num(x)} ${num(y)} cm /${name} Do Q`);
    return this;
  }

  /** Opacity for what follows (until the enclosing Q). */
  opacity(ref: PDFRef): string {
    const name = `${this.resourcePrefix}Gs${this.extGStates.size + 1}`;
    this.extGStates.set(name, ref);
    return name;
  }

  content(): string {
    return this.ops.join('\n');
  }

  /** The resources this canvas names, merged into (a copy of) the given resources dictionary. */
  writeResources(context: PDFContext, resources: PDFDict): void {
    const merge = (key: string, entries: Map<string, PDFRef>) => {
      if (entries.size === 0) return;
      const existing = resources.lookup(PDFName.of(key));
      const dict = existing instanceof PDFDict ? existing.clone(context) : context.obj({});
      for (const [name, ref] of entries) dict.set(PDFName.of(name), ref);
      resources.set(PDFName.of(key), dict);
    };
    merge('Font', this.fonts);
    merge('XObject', this.xObjects);
    merge('ExtGState', this.extGStates);
  }

  private fontsFor(style: TextStyle) {
    return this.typesetter.fontSet[style.weight ?? 'regular'];
  }
}
