import QRCode from 'qrcode';
import { type PageCanvas, num } from './canvas.ts';

/** Light modules a reader needs around the symbol (ISO/IEC 18004 asks for four). */
export const QR_QUIET_MODULES = 4;

/** A horizontal run of dark modules: `length` of them from column `start` of `row`. */
export interface QrRun {
  row: number;
  start: number;
  length: number;
}

/** The QR code's module matrix for `text`: error correction M (15 %), enough for a printed, folded page. */
export function qrMatrix(text: string): { size: number; dark(row: number, col: number): boolean } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  return { size: modules.size, dark: (row, col) => modules.get(row, col) === 1 };
}

/** The symbol's side in modules and its dark modules as horizontal runs, row by row: one shape per run. */
export function qrRuns(text: string): { size: number; runs: QrRun[] } {
  const m = qrMatrix(text);
  const runs: QrRun[] = [];
  for (let row = 0; row < m.size; row++) {
    let col = 0;
    while (col < m.size) {
      if (!m.dark(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < m.size && m.dark(row, col)) col++;
      runs.push({ row, start, length: col - start });
    }
  }
  return { size: m.size, runs };
}

/**
 * Draws a QR code (from qrRuns: the caller needs its size first, and encoding it twice cost as much as drawing it)
 * as vector rectangles (one per horizontal run of dark modules, filled as one path), its top-left corner at
 * (x, top), each module `module` points wide. The drawing is marked content tagged `/WathiqQR`, so a reader of the
 * content stream can find it. Returns the symbol's side in points (quiet zone not included: the caller keeps
 * QR_QUIET_MODULES modules around it free).
 */
export function drawQr(
  canvas: PageCanvas,
  { size, runs }: { size: number; runs: readonly QrRun[] },
  x: number,
  top: number,
  module: number,
): number {
  const ops: string[] = ['/WathiqQR BMC', 'q', '0 0 0 rg'];
  for (const { row, start, length } of runs) {
    const y = top - (row + 1) * module;
    ops.push(`${num(x + start * module)} ${num(y)} ${num(length * module)} ${num(module)} re`);
  }
  ops.push('f', 'Q', 'EMC');
  canvas.raw(ops.join('\n'));
  return size * module;
}
