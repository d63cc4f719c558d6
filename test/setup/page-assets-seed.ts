import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { copyIntoPlace } from './copy-into-place.ts';

/**
 * Copies the run's compressed page assets (the folder the global setup made: this version's brotli and gzip forms of
 * the approval page's and the API reference's assets) into `<dataDir>/asset-cache`, where an API process
 * (src/main.ts) looks for them before it compresses. Without them every API process a test starts spends about 20 s
 * of CPU on brotli at its highest quality in the background (src/http/precompressed.ts), on cores the other test
 * files share. The process still decodes each stored form and checks it against the file's SHA-256, so a stale or
 * damaged copy costs it a compression, nothing else.
 */
export async function seedPageAssets(runAssets: string, dataDir: string): Promise<void> {
  if (!runAssets) return;
  const target = path.join(dataDir, 'asset-cache');
  await mkdir(target, { recursive: true });
  for (const name of await readdir(runAssets))
    await copyIntoPlace(path.join(runAssets, name), path.join(target, name));
}
