// Copies every file under src/ that tsc does not emit (anything but .ts sources and .md notes) to the same place
// under the build's outDir: the approval page's script and stylesheet (src/approval-page/public/) are read beside
// their module at run time, and a built app without them answers 500 on /a/assets/*. Then compresses every asset
// of the approval page (its own files, pdf.js, its font data and cMaps) and of the API reference (Scalar's bundle
// and the script that mounts it) with brotli and gzip into
// <outDir>/precompressed/, named by the SHA-256 of the original: the built app serves those and compresses nothing.
//   node scripts/copy-assets.mjs [outDir]     (default: dist; `npm run build` runs it after tsc)
import { copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const outDir = path.resolve(root, process.argv[2] ?? 'dist');

const SKIP = new Set(['.ts', '.md']);

let copied = 0;
for (const entry of await readdir(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || SKIP.has(path.extname(entry.name))) continue;
  const from = path.join(entry.parentPath, entry.name);
  const to = path.join(outDir, path.relative(src, from));
  await mkdir(path.dirname(to), { recursive: true });
  await copyFile(from, to);
  copied++;
}
console.log(`copy-assets: ${copied} file(s) from src/ to ${path.relative(root, outDir) || '.'}`);

// The asset list and the compression are the built app's own modules, so the two cannot disagree.
const built = (file) => import(pathToFileURL(path.join(outDir, file)).href);
const { APPROVAL_ASSET_SOURCES } = await built('approval-page/assets.js');
const { REFERENCE_ASSET_SOURCES } = await built('api/reference/assets.js');
const { buildAssetCatalog } = await built('http/asset-catalog.js');
const { compress, compressedFileName, writeAtomically } = await built('http/precompressed.js');

const target = path.join(outDir, 'precompressed');
// Only the files matter here, not the URLs they are served under.
const catalog = buildAssetCatalog('', [...APPROVAL_ASSET_SOURCES, ...REFERENCE_ASSET_SOURCES]);
let made = 0;
let original = 0;
let smallest = 0;
for (const entry of catalog.entries.values()) {
  const bytes = await readFile(entry.path);
  original += bytes.length;
  const sizes = [bytes.length];
  for (const encoding of ['br', 'gzip']) {
    const file = path.join(target, compressedFileName(entry.sha256, encoding));
    const done = await stat(file).catch(() => undefined);
    if (done) {
      sizes.push(done.size);
      continue;
    }
    const compressed = await compress(bytes, encoding);
    await writeAtomically(file, compressed);
    sizes.push(compressed.length);
    made++;
  }
  smallest += Math.min(...sizes);
}
console.log(
  `copy-assets: ${catalog.entries.size} page asset(s) compressed into ${path.relative(root, target)} ` +
    `(${made} new; ${Math.round(original / 1024)} KB, ${Math.round(smallest / 1024)} KB as sent with brotli)`,
);
