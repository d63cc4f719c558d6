import type { PDFContext, PDFRef } from 'pdf-lib';
import type { PngLimits } from '../../images/png.ts';
import type { FinalizeApprover } from '../types.ts';
import { type PageCanvas, type Rgb, num } from './canvas.ts';
import { decodePng, embedDecodedPng } from './png.ts';
import { ltr } from './wording.ts';

export { FinalizeInputError } from '../finalize-errors.ts';

export interface EmbeddedImage {
  ref: PDFRef;
  width: number;
  height: number;
}

/** An approver's image that the reader refused (stored before upload checks were complete, or since damaged). */
export const UNREADABLE = 'unreadable';
export type MarkImage = EmbeddedImage | typeof UNREADABLE | undefined;

/** Embeds a signature or stamp PNG; throws a PngError for an image the approval page's check would refuse. */
export function embedPng(context: PDFContext, png: Uint8Array, limits: PngLimits): EmbeddedImage {
  const decoded = decodePng(png, limits);
  return { ref: embedDecodedPng(context, decoded), width: decoded.width, height: decoded.height };
}

/** Aspect ratio (height / width) of an approver's mark, so a placement knows its height from its width. */
export function markAspect(approver: FinalizeApprover, image: MarkImage): number {
  if (image === UNREADABLE) return NAME_ASPECT + 0.1; // the name, and a note under it
  if (image) return image.height / image.width;
  if (approver.actionType === 'stamp') return 1; // generated seal
  return NAME_ASPECT; // typed name
}

const NAME_ASPECT = 0.35;
const INK: Rgb = [0.08, 0.15, 0.45];
const SEAL: Rgb = [0.1, 0.22, 0.55];
const NOTE: Rgb = [0.45, 0.3, 0.1];

/** Under the name drawn in place of an image that could not be read: says so, in both languages. */
export const UNREADABLE_NOTE = {
  sign: 'Signature image unreadable; name shown · تعذّرت قراءة صورة التوقيع؛ يظهر الاسم',
  stamp: 'Stamp image unreadable; name shown · تعذّرت قراءة صورة الختم؛ يظهر الاسم',
} as const;

/**
 * Draws an approver's mark fitted and centred in the box (x, y, w, h): their image; else the generated seal
 * (stamp) or the typed name (sign); for an image that could not be read, their name with a note saying so.
 */
export function drawMark(
  canvas: PageCanvas,
  approver: FinalizeApprover,
  image: MarkImage,
  box: { x: number; y: number; w: number; h: number },
  seal: { accountName: string; date: string },
): void {
  const aspect = markAspect(approver, image);
  const w = Math.min(box.w, box.h / aspect);
  const h = w * aspect;
  const x = box.x + (box.w - w) / 2;
  const y = box.y + (box.h - h) / 2;
  if (image === UNREADABLE) {
    const noteHeight = h - w * NAME_ASPECT;
    drawName(canvas, approver.typedName ?? approver.nameEn, { x, y: y + noteHeight, w, h: h - noteHeight });
    const note = approver.actionType === 'stamp' ? UNREADABLE_NOTE.stamp : UNREADABLE_NOTE.sign;
    let size = Math.min(7, noteHeight * 0.6);
    const width = canvas.layout(note, { size }).width;
    if (width > w) size = Math.max(3, (size * w) / width);
    canvas.text(note, x, y + (noteHeight - size) / 2, { size, color: NOTE }, { width: w, align: 'center' });
    return;
  }
  if (image) {
    canvas.image(image.ref, x, y, w, h);
    return;
  }
  if (approver.actionType === 'stamp') {
    drawSeal(canvas, x + w / 2, y + h / 2, w / 2, approver, seal);
    return;
  }
  drawName(canvas, approver.typedName ?? approver.nameEn, { x, y, w, h });
}

/** A name written large over a short rule, as a typed signature. */
function drawName(
  canvas: PageCanvas,
  name: string,
  { x, y, w, h }: { x: number; y: number; w: number; h: number },
): void {
  let size = Math.min(22, h * 0.7);
  const width = canvas.layout(name, { size, weight: 'bold' }).width;
  if (width > w) size = Math.max(6, (size * w) / width);
  canvas.text(
    name,
    x,
    y + (h - size) / 2 + size * 0.25,
    { size, weight: 'bold', color: INK },
    { width: w, align: 'center' },
  );
  canvas.line(x + w * 0.1, y + h * 0.12, x + w * 0.9, y + h * 0.12, INK, 0.6);
}

/**
 * A round seal: two rings, the account name along the upper arc, the date along the lower arc, and the
 * approver's name and role in the middle.
 */
export function drawSeal(
  canvas: PageCanvas,
  cx: number,
  cy: number,
  r: number,
  approver: FinalizeApprover,
  seal: { accountName: string; date: string },
): void {
  canvas.circle(cx, cy, r * 0.97, SEAL, Math.max(0.8, r * 0.04));
  canvas.circle(cx, cy, r * 0.72, SEAL, Math.max(0.5, r * 0.02));
  const ringRadius = r * 0.845;
  const ringSize = r * 0.15;
  arcText(canvas, seal.accountName, cx, cy, ringRadius, ringSize, 'top');
  arcText(canvas, ltr(seal.date), cx, cy, ringRadius, ringSize, 'bottom');

  const inner = r * 0.62 * 2;
  const lines = [
    { text: approver.nameAr, weight: 'bold' as const },
    { text: approver.nameEn, weight: 'bold' as const },
    { text: [approver.roleAr, approver.roleEn].filter(Boolean).join(' · '), weight: 'regular' as const },
  ].filter((l) => l.text.trim() !== '');
  const lineSize = r * 0.13;
  const top = cy + ((lines.length - 1) * lineSize * 1.35) / 2 - lineSize * 0.35;
  lines.forEach((l, i) => {
    const width = canvas.layout(l.text, { size: lineSize, weight: l.weight }).width;
    const size = width > inner ? (lineSize * inner) / width : lineSize;
    canvas.text(
      l.text,
      cx - inner / 2,
      top - i * lineSize * 1.35,
      { size, weight: l.weight, color: SEAL },
      { width: inner, align: 'center' },
    );
  });
}

/** Text along the upper arc (reading clockwise) or the lower arc (reading counter-clockwise), left to right. */
function arcText(
  canvas: PageCanvas,
  text: string,
  cx: number,
  cy: number,
  radius: number,
  size: number,
  side: 'top' | 'bottom',
): void {
  const maxArc = Math.PI * radius * 0.8;
  let line = canvas.layout(text, { size, weight: 'bold' });
  if (line.width > maxArc) line = canvas.layout(text, { size: (size * maxArc) / line.width, weight: 'bold' });
  const drawn = line.runs[0]?.size ?? size;
  const baseline = side === 'top' ? radius - drawn * 0.35 : radius + drawn * 0.35;
  canvas.placeClusters(
    line,
    (xCenter, advance) => {
      const t = (xCenter - line.width / 2) / baseline;
      const theta = side === 'top' ? Math.PI / 2 - t : -Math.PI / 2 + t;
      const phi = side === 'top' ? theta - Math.PI / 2 : theta + Math.PI / 2;
      const px = cx + baseline * Math.cos(theta) - (advance / 2) * Math.cos(phi);
      const py = cy + baseline * Math.sin(theta) - (advance / 2) * Math.sin(phi);
      return `${num(Math.cos(phi))} ${num(Math.sin(phi))} ${num(-Math.sin(phi))} ${num(Math.cos(phi))} ${num(px)} ${num(py)} Tm`;
    },
    SEAL,
  );
}
