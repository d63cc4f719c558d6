import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildAssetCatalog, type CatalogEntry } from '../../src/http/asset-catalog.ts';
import { chooseEncoding } from '../../src/http/page-assets.ts';
import { compressedFileName, createPrecompressedAssets } from '../../src/http/precompressed.ts';

const scratch = () => mkdtemp(path.join(os.tmpdir(), 'wathiq-assets-'));
const TEXT = Buffer.from('const approval = "page";\n'.repeat(400));

async function fileEntry(bytes: Buffer = TEXT): Promise<CatalogEntry> {
  const dir = await scratch();
  await writeFile(path.join(dir, 'app.js'), bytes);
  const catalog = buildAssetCatalog('/a/assets', [
    { kind: 'file', name: 'app.js', path: () => path.join(dir, 'app.js'), type: 'text/javascript' },
  ]);
  return [...catalog.entries.values()][0]!;
}

describe('choosing a content encoding from Accept-Encoding', () => {
  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip;q=0.5', 'gzip'],
    ['BR;Q=1', 'br'],
    ['*', 'br'],
    ['*;q=0, gzip', 'gzip'],
    ['identity', 'identity'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['deflate', 'identity'],
    ['', 'identity'],
    [undefined, 'identity'],
    ['br;q=abc', 'br'], // a malformed weight is ignored, as if absent
    [';;;,,,', 'identity'],
  ])('%j → %s', (accept, expected) => {
    expect(chooseEncoding(accept)).toBe(expected);
  });
});

describe('the fingerprinted catalog', () => {
  it('names each file by its content, and a folder by all of its files', async () => {
    const dir = await scratch();
    await mkdir(path.join(dir, 'fonts'));
    await writeFile(path.join(dir, 'app.js'), 'one');
    await writeFile(path.join(dir, 'fonts', 'A.ttf'), 'font a');
    await writeFile(path.join(dir, 'fonts', 'notes.txt'), 'not served');
    const sources = [
      {
        kind: 'file' as const,
        name: 'app.js',
        path: () => path.join(dir, 'app.js'),
        type: 'text/javascript',
      },
      {
        kind: 'folder' as const,
        name: 'fonts',
        dir: () => path.join(dir, 'fonts'),
        files: /\.ttf$/,
        type: 'font/ttf',
      },
    ];
    const first = buildAssetCatalog('/a/assets', sources);
    expect(first.url('app.js')).toMatch(/^\/a\/assets\/app\.[0-9a-f]{16}\.js$/);
    expect(first.url('fonts')).toMatch(/^\/a\/assets\/fonts\.[0-9a-f]{16}\/$/);
    expect([...first.entries.keys()].some((k) => k.endsWith('notes.txt'))).toBe(false);
    expect(() => first.url('other.js')).toThrow(/No page asset/);

    await writeFile(path.join(dir, 'fonts', 'A.ttf'), 'font a, changed');
    const second = buildAssetCatalog('/a/assets', sources);
    expect(second.url('app.js')).toBe(first.url('app.js'));
    expect(second.url('fonts')).not.toBe(first.url('fonts'));
  });
});

describe('compressed forms, made once', () => {
  it('compresses a file once however many ask at the same time, and keeps it for the next start', async () => {
    const entry = await fileEntry();
    const cacheDir = await scratch();
    const assets = createPrecompressedAssets({ cacheDir, readDirs: [] });
    const answers = await Promise.all(Array.from({ length: 5 }, () => assets.get(entry, 'br')));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers[0]!.encoding).toBe('br');
    expect(brotliDecompressSync(answers[0]!.body)).toEqual(TEXT);
    expect(await readdir(cacheDir)).toEqual([compressedFileName(entry.sha256, 'br')]);
    const gzip = await assets.get(entry, 'gzip');
    expect(gunzipSync(gzip.body)).toEqual(TEXT);
    expect((await assets.get(entry, 'identity')).body).toEqual(TEXT);
  });

  it('serves what the build or an earlier start left, the build’s first, and compresses nothing itself', async () => {
    const entry = await fileEntry();
    const [built, cacheDir] = [await scratch(), await scratch()];
    // Forms no compression here would make (quality 1 and 2), so the answer shows where it came from.
    const quick = (quality: number) =>
      brotliCompressSync(TEXT, { params: { [constants.BROTLI_PARAM_QUALITY]: quality } });
    await writeFile(path.join(cacheDir, compressedFileName(entry.sha256, 'br')), quick(1));
    expect((await createPrecompressedAssets({ cacheDir, readDirs: [built] }).get(entry, 'br')).body).toEqual(
      quick(1),
    );
    await writeFile(path.join(built, compressedFileName(entry.sha256, 'br')), quick(2));
    expect((await createPrecompressedAssets({ cacheDir, readDirs: [built] }).get(entry, 'br')).body).toEqual(
      quick(2),
    );
  });

  it('makes a stored form again when it is damaged or of another file', async () => {
    const entry = await fileEntry();
    const cacheDir = await scratch();
    const stored = path.join(cacheDir, compressedFileName(entry.sha256, 'br'));
    for (const wrong of [
      brotliCompressSync(TEXT).subarray(0, 40),
      brotliCompressSync(Buffer.from('another file')),
    ]) {
      await writeFile(stored, wrong);
      const answer = await createPrecompressedAssets({ cacheDir, readDirs: [] }).get(entry, 'br');
      expect(brotliDecompressSync(answer.body)).toEqual(TEXT);
      // And the cache holds the good form for the next start.
      expect(brotliDecompressSync(await readFile(stored))).toEqual(TEXT);
    }
  });

  it('sends a file that does not compress as it is', async () => {
    const noise = randomBytes(4096);
    const entry = await fileEntry(noise);
    const answer = await createPrecompressedAssets({ cacheDir: await scratch(), readDirs: [] }).get(
      entry,
      'br',
    );
    expect(answer).toEqual({ body: noise, encoding: 'identity' });
  });

  it('still answers when the cache cannot be written, and says so', async () => {
    const entry = await fileEntry();
    const blocked = path.join(await scratch(), 'a-file');
    await writeFile(blocked, 'not a folder');
    const errors: unknown[] = [];
    const assets = createPrecompressedAssets({
      cacheDir: blocked,
      readDirs: [],
      onCacheWriteError: (err) => errors.push(err),
    });
    expect(brotliDecompressSync((await assets.get(entry, 'br')).body)).toEqual(TEXT);
    expect(errors).toHaveLength(1);
  });

  it('warm makes every form of every registered file', async () => {
    const entries = [await fileEntry(), await fileEntry(Buffer.from('other content '.repeat(100)))];
    const cacheDir = await scratch();
    const assets = createPrecompressedAssets({ cacheDir, readDirs: [] });
    assets.register(entries);
    await assets.warm();
    expect((await readdir(cacheDir)).sort()).toEqual(
      entries
        .flatMap((e) => [compressedFileName(e.sha256, 'br'), compressedFileName(e.sha256, 'gzip')])
        .sort(),
    );
    expect(
      gunzipSync(await readFile(path.join(cacheDir, compressedFileName(entries[1]!.sha256, 'gzip')))),
    ).toEqual(Buffer.from('other content '.repeat(100)));
  });
});
