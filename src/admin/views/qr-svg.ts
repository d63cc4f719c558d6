import { html, type SafeHtml } from '../../http/html.ts';
import { QR_QUIET_MODULES, qrRuns } from '../../pdf/compose/qr.ts';

/**
 * A QR code as inline SVG: one path of dark runs on a white square with the quiet zone around it. Built from
 * the module matrix (numbers only), so nothing of `text` reaches the markup, and no data: URL or inline style
 * is needed under the dashboard's CSP.
 */
export function qrSvg(text: string, label: string, id: string): SafeHtml {
  const { size, runs } = qrRuns(text);
  const side = size + 2 * QR_QUIET_MODULES;
  const q = QR_QUIET_MODULES;
  const path = runs.map((r) => `M${r.start + q} ${r.row + q}h${r.length}v1h-${r.length}z`).join('');
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
    <path fill="#000" d="${path}" />
  </svg>`;
}
