import type { Storage } from '../../src/storage/storage.ts';

/**
 * A storage driver that fails the way a careless one might: `put` throws synchronously, inside whatever called it
 * (for an upload, inside busboy's 'file' event). Everything else is the real driver underneath.
 */
export function storageThrowingOnPut(real: Storage, message = 'storage driver exploded'): Storage {
  return {
    kind: real.kind,
    put: () => {
      throw new Error(message);
    },
    get: (key) => real.get(key),
    getRange: (key, start, end) => real.getRange(key, start, end),
    stat: (key) => real.stat(key),
    delete: (key) => real.delete(key),
  };
}
