import zlib from 'node:zlib';

/**
 * Unwraps a WOFF 1.0 file into the plain sfnt (TrueType) it carries: HarfBuzz shapes from sfnt and PDF embeds sfnt
 * (FontFile2). The fonts come from npm as WOFF; decoding here avoids shipping font binaries in the repository.
 */
export function woffToSfnt(woff: Uint8Array): Buffer {
  const w = Buffer.from(woff.buffer, woff.byteOffset, woff.byteLength);
  if (w.length < 44 || w.toString('latin1', 0, 4) !== 'wOFF') throw new Error('not a WOFF 1.0 font');
  const flavor = w.readUInt32BE(4);
  const numTables = w.readUInt16BE(12);
  const tables = Array.from({ length: numTables }, (_, i) => {
    const o = 44 + i * 20;
    const tag = w.toString('latin1', o, o + 4);
    const offset = w.readUInt32BE(o + 4);
    const compLength = w.readUInt32BE(o + 8);
    const origLength = w.readUInt32BE(o + 12);
    const checksum = w.readUInt32BE(o + 16);
    const raw = w.subarray(offset, offset + compLength);
    const data = compLength < origLength ? zlib.inflateSync(raw) : raw;
    if (data.length !== origLength) throw new Error(`WOFF table ${tag} has the wrong length`);
    return { tag, checksum, data };
  });
  return buildSfnt(flavor, tables);
}

export interface SfntTable {
  tag: string;
  checksum?: number;
  data: Uint8Array;
}

/** Assembles an sfnt from tables (sorted by tag, 4-byte aligned), computing checksums that are not given. */
export function buildSfnt(flavor: number, tables: SfntTable[]): Buffer {
  const sorted = [...tables].sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
  const n = sorted.length;
  let size = 12 + 16 * n;
  for (const t of sorted) size += (t.data.length + 3) & ~3;
  const out = Buffer.alloc(size);
  let searchRange = 1;
  let entrySelector = 0;
  while (searchRange * 2 <= n) {
    searchRange *= 2;
    entrySelector++;
  }
  out.writeUInt32BE(flavor, 0);
  out.writeUInt16BE(n, 4);
  out.writeUInt16BE(searchRange * 16, 6);
  out.writeUInt16BE(entrySelector, 8);
  out.writeUInt16BE(n * 16 - searchRange * 16, 10);
  let offset = 12 + 16 * n;
  sorted.forEach((t, i) => {
    const dir = 12 + 16 * i;
    out.write(t.tag, dir, 'latin1');
    out.set(t.data, offset);
    out.writeUInt32BE(
      t.checksum ?? tableChecksum(out.subarray(offset, offset + ((t.data.length + 3) & ~3))),
      dir + 4,
    );
    out.writeUInt32BE(offset, dir + 8);
    out.writeUInt32BE(t.data.length, dir + 12);
    offset += (t.data.length + 3) & ~3;
  });
  return out;
}

export function tableChecksum(padded: Uint8Array): number {
  const b = Buffer.from(padded.buffer, padded.byteOffset, padded.byteLength);
  let sum = 0;
  for (let i = 0; i + 4 <= b.length; i += 4) sum = (sum + b.readUInt32BE(i)) >>> 0;
  return sum;
}
