import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { HashingCounter } from './hashing.ts';
import { writeNewFile } from './write-new-file.ts';
import { assertKey, type ObjectStat, type Storage, type StorageBody, type StoredObject } from './storage.ts';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

/**
 * Files under `root` (default `${DATA_DIR}/files`). A put writes to `root/.tmp/<uuid>` and renames it into place
 * only when the whole body arrived, so readers never see half a file and a refused upload leaves nothing.
 */
export function createLocalStorage(root: string): Storage {
  const tmpDir = path.join(root, '.tmp');
  const pathOf = (key: string) => {
    assertKey(key);
    return path.join(root, ...key.split('/'));
  };

  const openRead = async (key: string, range?: { start: number; end: number }) => {
    const file = pathOf(key);
    try {
      const s = await stat(file);
      if (!s.isFile()) return undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    return createReadStream(file, range);
  };

  return {
    kind: 'local',

    async put(key: string, body: StorageBody): Promise<StoredObject> {
      const target = pathOf(key);
      await mkdir(tmpDir, { recursive: true });
      const tmp = path.join(tmpDir, randomUUID());
      const counter = new HashingCounter();
      try {
        await writeNewFile(tmp, body, counter);
        await mkdir(path.dirname(target), { recursive: true });
        await rename(tmp, target);
      } catch (err) {
        await rm(tmp, { force: true });
        throw err;
      }
      return { size: counter.size, sha256: counter.digest() };
    },

    get: (key) => openRead(key),

    getRange: (key, start, end) => openRead(key, { start, end }),

    async stat(key: string): Promise<ObjectStat | undefined> {
      try {
        const s = await stat(pathOf(key));
        return s.isFile() ? { size: s.size } : undefined;
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    },

    async delete(key: string): Promise<void> {
      await rm(pathOf(key), { force: true });
    },
  };
}
