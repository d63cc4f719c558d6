import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants, gunzip, gzip } from 'node:zlib';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { CatalogEntry } from './asset-catalog.ts';

export type ContentEncoding = 'br' | 'gzip';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Where `npm run build` leaves the compressed forms: dist/precompressed, beside dist/http. */
export const BUILT_PRECOMPRESSED_DIR = fileURLToPath(new URL('../precompressed/', import.meta.url));

/**
 * The strongest settings of each format: they cost seconds (brotli 11 takes about 2.7 s for pdf.js's worker), which
 * is paid once per file version, never per request, and buys the approver on a mobile connection 10-15 % fewer
 * bytes than the fast settings.
 */
export async function compress(bytes: Buffer, encoding: ContentEncoding): Promise<Buffer> {
  if (encoding === 'gzip') return gzipAsync(bytes, { level: 9 });
  return brotli(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
}

const unbrotli = promisify(brotliDecompress);
const gunzipAsync = promisify(gunzip);

/** Whether `compressed` decodes to the bytes whose SHA-256 is `sha256`. */
async function decodesTo(compressed: Buffer, encoding: ContentEncoding, sha256: string): Promise<boolean> {
  const plain = await (encoding === 'br' ? unbrotli(compressed) : gunzipAsync(compressed)).catch(
    () => undefined,
  );
  return plain !== undefined && createHash('sha256').update(plain).digest('hex') === sha256;
}

/** A compressed form's file name: content-addressed, so a folder can hold every version of every asset. */
export const compressedFileName = (sha256: string, encoding: ContentEncoding) =>
  `${sha256}.${encoding === 'br' ? 'br' : 'gz'}`;

/** Writes through a temporary name, so a reader (another process sharing the folder) never sees half a file. */
export async function writeAtomically(file: string, bytes: Buffer): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, file);
}

export interface EncodedAsset {
  body: Buffer;
  /** The encoding of `body`; identity when no compressed form is smaller than the file itself. */
  encoding: ContentEncoding | 'identity';
}

/** The page assets' bytes in each encoding, each compressed form made at most once per process. */
export interface PrecompressedAssets {
  /** Adds files to those `warm` prepares. */
  register(entries: Iterable<CatalogEntry>): void;
  /** `entry` in `encoding`, or as it is when compressing does not make it smaller. */
  get(entry: CatalogEntry, encoding: ContentEncoding | 'identity'): Promise<EncodedAsset>;
  /** Prepares every compressed form of every registered file (run in the background at start-up). */
  warm(): Promise<void>;
}

/**
 * Compressed forms are looked up, in order, in `readDirs` (what the build made) and `cacheDir` (what an earlier
 * start made); a form found in neither is compressed once, kept in memory and written to `cacheDir` for the next
 * start. Requests only ever wait for that one compression, never start their own.
 */
export function createPrecompressedAssets(options: {
  cacheDir: string;
  readDirs?: readonly string[];
  onCacheWriteError?: (err: unknown) => void;
}): PrecompressedAssets {
  const readDirs = options.readDirs ?? [BUILT_PRECOMPRESSED_DIR];
  const registered = new Map<string, CatalogEntry>();
  const raw = new Map<string, Promise<Buffer>>();
  const encoded = new Map<string, Promise<Buffer>>();

  const original = (entry: CatalogEntry) => {
    let bytes = raw.get(entry.sha256);
    if (!bytes) {
      bytes = readFile(entry.path);
      raw.set(entry.sha256, bytes);
      bytes.catch(() => raw.delete(entry.sha256));
    }
    return bytes;
  };

  /** A stored form is used only when it decodes to the very file (a damaged or foreign one is made again). */
  const findStored = async (entry: CatalogEntry, encoding: ContentEncoding): Promise<Buffer | undefined> => {
    const name = compressedFileName(entry.sha256, encoding);
    for (const dir of [...readDirs, options.cacheDir]) {
      const found = await readFile(path.join(dir, name)).catch(() => undefined);
      if (found && (await decodesTo(found, encoding, entry.sha256))) return found;
    }
    return undefined;
  };

  const make = async (entry: CatalogEntry, encoding: ContentEncoding): Promise<Buffer> => {
    const stored = await findStored(entry, encoding);
    if (stored) return stored;
    const bytes = await compress(await original(entry), encoding);
    await writeAtomically(
      path.join(options.cacheDir, compressedFileName(entry.sha256, encoding)),
      bytes,
    ).catch((err: unknown) => options.onCacheWriteError?.(err));
    return bytes;
  };

  const compressed = (entry: CatalogEntry, encoding: ContentEncoding) => {
    const key = compressedFileName(entry.sha256, encoding);
    let bytes = encoded.get(key);
    if (!bytes) {
      bytes = make(entry, encoding);
      encoded.set(key, bytes);
      // A failure (a file removed under us) is not remembered: the next request tries again.
      bytes.catch(() => encoded.delete(key));
    }
    return bytes;
  };

  return {
    register(entries) {
      for (const entry of entries) registered.set(entry.sha256, entry);
    },
    async get(entry, encoding) {
      const plain = await original(entry);
      if (encoding === 'identity') return { body: plain, encoding };
      const body = await compressed(entry, encoding);
      return body.length < plain.length ? { body, encoding } : { body: plain, encoding: 'identity' };
    },
    async warm() {
      // One file at a time: start-up shares the CPU with the requests already being answered.
      for (const entry of registered.values())
        for (const encoding of ['br', 'gzip'] as const) await compressed(entry, encoding);
    },
  };
}

/** The app's store: the build's forms, then `${DATA_DIR}/asset-cache` (made on first need, kept across starts). */
export function pageAssetsFor(
  config: Pick<Config, 'dataDir'>,
  logger: Pick<Logger, 'warn'>,
): PrecompressedAssets {
  return createPrecompressedAssets({
    cacheDir: path.join(config.dataDir, 'asset-cache'),
    onCacheWriteError: (err) =>
      logger.warn(
        { err },
        'page assets: a compressed form could not be cached; it is made again at the next start',
      ),
  });
}
