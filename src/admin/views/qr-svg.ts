import { html, type SafeHtml } from '../../http/html.ts';
import { QR_QUIET_MODULES, qrMatrix } from '../../pdf/compose/qr.ts';

/**
 * A QR code as inline SVG: one path of dark runs on a white square with the quiet zone around it. Built from
 * the module matrix (numbers only), so nothing of `text` reaches the markup, and no data: URL or inline style
 * is needed under the dashboard's CSP.
 */
export function qrSvg(text: string, label: string, id: string): SafeHtml {
  const m = qrMatrix(text);
  const side = m.size + 2 * QR_QUIET_MODULES;
  const runs: string[] = [];
  for (let row = 0; row < m.size; row++) {
    let col = 0;
    while (col < m.size) {
      if (!m.dark(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < m.size && m.dark(row, col)) col++;
      runs.push(`M${start + QR_QUIET_MODULES} ${row + QR_QUIET_MODULES}h${col - start}v1h-${col - start}z`);
    }
  }
  return html`<svg
    id="${id}"
    class="qr"
    role="img"
    aria-label="${label}"
    xmlns="http://www.w3.org/2000/svg"
    viewBox="0 0 ${side} ${side}"
    width="${side * 5}"
    height="${side * 5}"
    shape-rendering="crispEdges"
  >
    <rect width="${side}" height="${side}" fill="#fff" />
    <path fill="#000" d="${runs.join('')}" />
  </svg>`;
}
