import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AssetSource } from '../http/asset-catalog.ts';
import { PAGE_CSS_SOURCE } from '../http/page-assets.ts';

const require = createRequire(import.meta.url);
const own = (file: string) => () => fileURLToPath(new URL(`./public/${file}`, import.meta.url));
const pdfjs = (file: string) => () => require.resolve(`pdfjs-dist/${file}`);
const pdfjsDir = (dir: string) => () =>
  path.join(path.dirname(require.resolve('pdfjs-dist/package.json')), dir);

/** Where the approval page's assets are served (approval-page-routes.ts). */
export const APPROVAL_ASSETS_BASE = '/a/assets';

/**
 * Everything the approval page loads besides itself and the PDF. pdf.js is its legacy build, which runs on the
 * older mobile browsers approvers still carry; its font data and cMaps are served from here, never a CDN. The
 * build (scripts/copy-assets.mjs) compresses exactly these files.
 */
export const APPROVAL_ASSET_SOURCES: readonly AssetSource[] = [
  PAGE_CSS_SOURCE,
  { kind: 'file', name: 'approval.css', path: own('approval.css'), type: 'text/css' },
  { kind: 'file', name: 'approval.js', path: own('approval.js'), type: 'text/javascript' },
  { kind: 'file', name: 'pdf-viewer.js', path: own('pdf-viewer.js'), type: 'text/javascript' },
  { kind: 'file', name: 'signature-pad.js', path: own('signature-pad.js'), type: 'text/javascript' },
  { kind: 'file', name: 'pdf.min.mjs', path: pdfjs('legacy/build/pdf.min.mjs'), type: 'text/javascript' },
  {
    kind: 'file',
    name: 'pdf.worker.min.mjs',
    path: pdfjs('legacy/build/pdf.worker.min.mjs'),
    type: 'text/javascript',
  },
  // The standard 14 fonts' data (Helvetica, Times, Courier, …) and the predefined CMaps of CJK text.
  {
    kind: 'folder',
    name: 'standard_fonts',
    dir: pdfjsDir('standard_fonts'),
    files: /^[A-Za-z0-9_-]+\.(pfb|ttf)$/,
    type: 'application/octet-stream',
  },
  {
    kind: 'folder',
    name: 'cmaps',
    dir: pdfjsDir('cmaps'),
    files: /^[A-Za-z0-9_.-]+\.bcmap$/,
    type: 'application/octet-stream',
  },
];
