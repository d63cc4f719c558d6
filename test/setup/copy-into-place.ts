import { randomUUID } from 'node:crypto';
import { copyFile, rm, rename } from 'node:fs/promises';
import path from 'node:path';

/**
 * Copies `source` to `target` whole under a temporary name beside it, then renames it into place, as the caches a
 * process reads write their files: a process starting beside the copy never reads half a file.
 */
export async function copyIntoPlace(source: string, target: string): Promise<void> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}`);
  await copyFile(source, temp);
  await rename(temp, target).catch(async (err: unknown) => {
    await rm(temp, { force: true });
    throw err;
  });
}
