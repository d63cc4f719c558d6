import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The generated halves of clients/ are what `npm run clients:generate` makes from the committed openapi.json: a
 * change to the document without regenerating fails here, naming the file and its first stale line.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const GENERATED = ['clients/typescript/src/schema.d.ts', 'clients/python/wathiq_client/_generated.py'];

describe('the generated clients', () => {
  it('match what npm run clients:generate makes from openapi.json', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'wathiq-clients-'));
    try {
      await promisify(execFile)(process.execPath, [
        path.join(ROOT, 'scripts/generate-clients.mjs'),
        '--out',
        out,
      ]);
      for (const rel of GENERATED) {
        const fresh = (await readFile(path.join(out, rel), 'utf8')).split('\n');
        const committed = (await readFile(path.join(ROOT, rel), 'utf8')).split('\n');
        const first = fresh.findIndex((line, i) => line !== committed[i]);
        const stale = first === -1 && fresh.length === committed.length ? undefined : Math.max(first, 0) + 1;
        expect(stale, `${rel} is stale from line ${stale}: run npm run clients:generate`).toBeUndefined();
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 60_000);
});
