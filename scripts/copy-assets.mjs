// Copies every file under src/ that tsc does not emit (anything but .ts sources and .md notes) to the same place
// under the build's outDir: the approval page's script and stylesheet (src/approval-page/public/) are read beside
// their module at run time, and a built app without them answers 500 on /a/assets/*.
//   node scripts/copy-assets.mjs [outDir]     (default: dist; `npm run build` runs it after tsc)
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';

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
