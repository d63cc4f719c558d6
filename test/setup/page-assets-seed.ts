import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Copies the run's compressed page assets (the folder the global setup made: this version's brotli and gzip forms of
 * the approval page's and the API reference's assets) into `<dataDir>/asset-cache`, where an API process
 * (src/main.ts) looks for them before it compresses. Without them every API process a test starts spends about 20 s
 * of CPU on brotli at its highest quality in the background (src/http/precompressed.ts), on cores the other test
 * files share. The process still decodes each stored form and checks it against the file's SHA-256, so a stale or
 * damaged copy costs it a compression, nothing else. Each file is copied whole and renamed into place, as the cache
 * itself writes them, so a process starting beside this never reads half a file.
 */
export async function seedPageAssets(runAssets: string, dataDir: string): Promise<void> {
  if (!runAssets) return;
  const target = path.join(dataDir, 'asset-cache');
  await mkdir(target, { recursive: true });
  for (const name of await readdir(runAssets)) {
    const temp = path.join(target, `.${name}.${randomUUID()}`);
    await copyFile(path.join(runAssets, name), temp);
    await rename(temp, path.join(target, name)).catch(async (err: unknown) => {
      await rm(temp, { force: true });
      throw err;
    });
  }
}
