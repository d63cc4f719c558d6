import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One file served under its own fingerprinted name: `approval.js` becomes `approval.<hash>.js`. */
export interface AssetFile {
  kind: 'file';
  name: string;
  path: () => string;
  type: string;
}

/**
 * A folder whose files a library fetches by their own names (pdf.js's font data and cMaps): the folder's name is
 * fingerprinted instead, from every file in it, so `standard_fonts/` becomes `standard_fonts.<hash>/`.
 */
export interface AssetFolder {
  kind: 'folder';
  name: string;
  dir: () => string;
  /** The files of the folder that are served, by name. */
  files: RegExp;
  type: string;
}

export type AssetSource = AssetFile | AssetFolder;

/** A servable file: where it is, its media type, and the SHA-256 of its bytes (the key of its compressed forms). */
export interface CatalogEntry {
  path: string;
  type: string;
  sha256: string;
}

/** The fingerprinted assets of one page, read once when the page's router is built. */
export interface AssetCatalog {
  /** The URL of a file asset, or of a folder asset with its trailing slash. Throws for a name not in the catalog. */
  url(name: string): string;
  /** The servable files by their path under the assets URL (`approval.<hash>.js`, `cmaps.<hash>/UniGB-UCS2-H.bcmap`). */
  readonly entries: ReadonlyMap<string, CatalogEntry>;
}

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');
/** 64 bits of the content hash: enough to tell versions apart, short enough for a URL. */
const fingerprint = (hex: string) => hex.slice(0, 16);

/** `pdf.worker.min.mjs` with fingerprint f is `pdf.worker.min.f.mjs`: the extension stays last for any tool. */
function fingerprinted(name: string, hex: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0
    ? `${name}.${fingerprint(hex)}`
    : `${name.slice(0, dot)}.${fingerprint(hex)}${name.slice(dot)}`;
}

/**
 * Reads and hashes every source (synchronously: it runs once, when the app is built, before any request), and
 * names each by its content. A changed file gets a new URL, so every URL can be cached for a year as immutable.
 */
export function buildAssetCatalog(base: string, sources: readonly AssetSource[]): AssetCatalog {
  const entries = new Map<string, CatalogEntry>();
  const urls = new Map<string, string>();
  for (const source of sources) {
    if (source.kind === 'file') {
      const file = source.path();
      const hex = sha256(readFileSync(file));
      const served = fingerprinted(source.name, hex);
      entries.set(served, { path: file, type: source.type, sha256: hex });
      urls.set(source.name, `${base}/${served}`);
      continue;
    }
    const dir = source.dir();
    const names = readdirSync(dir)
      .filter((n) => source.files.test(n))
      .sort();
    const files = names.map((n) => {
      const file = path.join(dir, n);
      return { name: n, file, hex: sha256(readFileSync(file)) };
    });
    const folder = fingerprinted(source.name, sha256(files.map((f) => `${f.name}\0${f.hex}\n`).join('')));
    for (const f of files)
      entries.set(`${folder}/${f.name}`, { path: f.file, type: source.type, sha256: f.hex });
    urls.set(source.name, `${base}/${folder}/`);
  }
  return {
    entries,
    url(name) {
      const url = urls.get(name);
      if (!url) throw new Error(`No page asset named ${name}`);
      return url;
    },
  };
}
