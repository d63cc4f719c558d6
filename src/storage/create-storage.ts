import { createLocalStorage } from './local-storage.ts';
import { createS3Storage } from './s3-storage.ts';
import type { StorageConfig } from '../config/storage.ts';
import type { Storage } from './storage.ts';

export function createStorage(config: { storage: StorageConfig }): Storage {
  const c = config.storage;
  return c.driver === 'local' ? createLocalStorage(c.dir) : createS3Storage(c);
}
