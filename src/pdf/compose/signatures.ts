import type { FinalizeApprover } from '../types.ts';
import { PageCanvas, type Rgb, type TextStyle, type Typesetter } from './canvas.ts';
import { type MarkImage, drawMark } from './marks.ts';
import { A4 } from './pages.ts';
import { ACTION_LABEL, LABELS, formatShortTimes, ltr } from './wording.ts';

const MARGIN = 40;
const WIDTH = A4[0] - 2 * MARGIN;
const TOP = A4[1] - MARGIN;
const COLS = 2;
const ROWS = 4;
const GUTTER = 12;
const BOX_W = (WIDTH - GUTTER * (COLS - 1)) / COLS;
const BOX_H = (TOP - 40 - MARGIN - GUTTER * (ROWS - 1)) / ROWS;

const NAME: TextStyle = { size: 9, weight: 'bold', color: [0.08, 0.09, 0.12] };
const SMALL: TextStyle = { size: 7.5, color: [0.38, 0.4, 0.45] };
const FRAME: Rgb = [0.75, 0.78, 0.85];

export interface SignatureBox {
  approver: FinalizeApprover;
  image: MarkImage;
}

/**
 * The signatures page(s): one labelled box per signing or stamping approver (names in both languages, role,
 * action and time), eight boxes a page.
 */
export function layoutSignaturePages(
  typesetter: Typesetter,
  boxes: readonly SignatureBox[],
  seal: { accountName: string },
): PageCanvas[] {
  const pages: PageCanvas[] = [];
  boxes.forEach((box, i) => {
    const slot = i % (COLS * ROWS);
    if (slot === 0) {
      const c = new PageCanvas(typesetter);
      c.text(LABELS.signaturesTitle.en, MARGIN, TOP - 16, {
        size: 15,
        weight: 'bold',
        color: [0.1, 0.16, 0.35],
      });
      c.text(
        LABELS.signaturesTitle.ar,
        MARGIN,
        TOP - 16,
        { size: 15, weight: 'bold', color: [0.1, 0.16, 0.35], direction: 'rtl' },
        { width: WIDTH },
      );
      c.line(MARGIN, TOP - 26, MARGIN + WIDTH, TOP - 26, [0.1, 0.16, 0.35], 1);
      pages.push(c);
    }
    const canvas = pages[pages.length - 1] as PageCanvas;
    const col = slot % COLS;
    const row = Math.floor(slot / COLS);
    const x = MARGIN + col * (BOX_W + GUTTER);
    const yTop = TOP - 40 - row * (BOX_H + GUTTER);
    drawBox(canvas, box, x, yTop - BOX_H, seal);
  });
  return pages;
}

function drawBox(
  canvas: PageCanvas,
  box: SignatureBox,
  x: number,
  y: number,
  seal: { accountName: string },
): void {
  const { approver: a } = box;
  const pad = 7;
  const inner = BOX_W - 2 * pad;
  canvas.rect(x, y, BOX_W, BOX_H, { stroke: FRAME, lineWidth: 0.8 });
  let ty = y + BOX_H - pad - NAME.size;
  canvas.text(fit(canvas, a.nameEn, NAME, inner), x + pad, ty, NAME);
  ty -= NAME.size * 1.45;
  canvas.text(
    fit(canvas, a.nameAr, { ...NAME, direction: 'rtl' }, inner),
    x + pad,
    ty,
    { ...NAME, direction: 'rtl' },
    { width: inner },
  );
  ty -= SMALL.size * 1.6;
  const role = [a.roleEn, a.roleAr].filter((r) => r && r.trim() !== '').join(' · ');
  if (role) {
    canvas.text(fit(canvas, role, SMALL, inner), x + pad, ty, SMALL, { width: inner, align: 'left' });
    ty -= SMALL.size * 1.45;
  }
  const action = ACTION_LABEL[a.actionType];
  canvas.text(
    fit(canvas, `${action.en} · ${action.ar} · ${ltr(formatShortTimes(a.actedAt))}`, SMALL, inner),
    x + pad,
    ty,
    SMALL,
    {
      width: inner,
      align: 'left',
    },
  );
  const markTop = ty - 6;
  canvas.line(x + pad, markTop + 2, x + BOX_W - pad, markTop + 2, [0.9, 0.91, 0.94], 0.4);
  drawMark(
    canvas,
    a,
    box.image,
    { x: x + pad, y: y + pad, w: inner, h: markTop - (y + pad) },
    {
      accountName: seal.accountName,
      date: a.actedAt.toISOString().slice(0, 10),
    },
  );
}

/** Shortens text with an ellipsis until it fits the width. */
export function fit(canvas: PageCanvas, text: string, style: TextStyle, width: number): string {
  if (canvas.layout(text, style).width <= width) return text;
  const chars = [...text];
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (canvas.layout(`${chars.slice(0, mid).join('')}…`, style).width <= width) lo = mid;
    else hi = mid - 1;
  }
  return `${chars.slice(0, lo).join('')}…`;
}
