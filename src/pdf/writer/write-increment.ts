import { createHash } from 'node:crypto';
import { PDFArray, PDFHexString, type PDFObject, PDFRef } from 'pdf-lib';
import type { PdfRevision } from './pdf-revision.ts';

export interface IncrementResult {
  /** The whole file: the original bytes followed by the update. */
  pdf: Buffer;
  /** Absolute offset of each object written raw (by object number). */
  rawOffsets: Map<number, number>;
}

const eol = Buffer.from('\n', 'latin1');

interface Written {
  ref: PDFRef;
  bytes: Buffer;
}

type Offsets = Map<number, { offset: number; gen: number }>;

/**
 * Appends the revision's new objects (numbered from firstNewObjectNumber) and its dirty objects, then a
 * cross-reference section of the same kind as the file's last one, chained to it with /Prev. `raw` supplies
 * objects whose serialization the caller controls byte for byte (the signature dictionary and its placeholder).
 */
export function writeIncrement(revision: PdfRevision, raw: Map<number, Buffer> = new Map()): IncrementResult {
  const objects = collectObjects(revision, raw);
  const base = Buffer.from(revision.bytes.buffer, revision.bytes.byteOffset, revision.bytes.byteLength);
  const parts: Buffer[] = [];
  let offset = base.length;
  const add = (b: Buffer) => {
    parts.push(b);
    offset += b.length;
  };
  if (base[base.length - 1] !== 0x0a && base[base.length - 1] !== 0x0d) add(eol);

  const offsets: Offsets = new Map();
  const rawOffsets = new Map<number, number>();
  const bodyHash = createHash('md5');
  for (const o of objects) {
    offsets.set(o.ref.objectNumber, { offset, gen: o.ref.generationNumber });
    if (raw.has(o.ref.objectNumber)) {
      rawOffsets.set(o.ref.objectNumber, offset + `${o.ref.objectNumber} 0 obj\n`.length);
    }
    bodyHash.update(o.bytes);
    add(o.bytes);
  }

  const id = fileId(revision, bodyHash.digest('hex'));
  const common = `/Root ${revision.trailer.root.toString()}${
    revision.trailer.info ? ` /Info ${revision.trailer.info.toString()}` : ''
  } /ID ${id} /Prev ${revision.prevStartXref}`;
  add(
    revision.xrefKind === 'table'
      ? xrefTable(revision, offsets, common, offset)
      : xrefStream(revision, offsets, common, offset),
  );
  return { pdf: Buffer.concat([base, ...parts]), rawOffsets };
}

/** The dirty objects in number order, then the new ones, each framed as `n g obj … endobj`. */
function collectObjects(revision: PdfRevision, raw: Map<number, Buffer>): Written[] {
  const { context } = revision;
  const objects: Written[] = [];
  const serialize = (ref: PDFRef, obj: PDFObject) => {
    const body = Buffer.alloc(obj.sizeInBytes());
    obj.copyBytesInto(body, 0);
    return frame(ref, body);
  };
  for (const ref of [...revision.dirty].sort((a, b) => a.objectNumber - b.objectNumber)) {
    const obj = context.lookup(ref);
    if (obj) objects.push({ ref, bytes: serialize(ref, obj) });
  }
  for (let n = revision.firstNewObjectNumber; n <= context.largestObjectNumber; n++) {
    const ref = PDFRef.of(n);
    const rawBytes = raw.get(n);
    if (rawBytes) {
      objects.push({ ref, bytes: frame(ref, rawBytes) });
      continue;
    }
    const obj = context.lookup(ref);
    if (obj) objects.push({ ref, bytes: serialize(ref, obj) });
  }
  return objects;
}

function frame(ref: PDFRef, body: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`${ref.objectNumber} ${ref.generationNumber} obj\n`, 'latin1'),
    body,
    Buffer.from('\nendobj\n', 'latin1'),
  ]);
}

/** A classic `xref` table and trailer, for a file whose last section is one. */
function xrefTable(revision: PdfRevision, offsets: Offsets, common: string, xrefOffset: number): Buffer {
  const size = Math.max(revision.trailer.size, revision.context.largestObjectNumber + 1);
  let table = 'xref\n';
  for (const [start, nums] of subsections([...offsets.keys()])) {
    table += `${start} ${nums.length}\n`;
    for (const n of nums) {
      const e = offsets.get(n) as { offset: number; gen: number };
      table += `${String(e.offset).padStart(10, '0')} ${String(e.gen).padStart(5, '0')} n\r\n`;
    }
  }
  return Buffer.from(
    `${table}trailer\n<< /Size ${size} ${common} >>\nstartxref\n${xrefOffset}\n%%EOF\n`,
    'latin1',
  );
}

/** A cross-reference stream (a new object of its own, listed in itself), for a file whose last section is one. */
function xrefStream(revision: PdfRevision, offsets: Offsets, common: string, xrefOffset: number): Buffer {
  const { context } = revision;
  const xrefNum = context.largestObjectNumber + 1;
  context.largestObjectNumber = xrefNum;
  offsets.set(xrefNum, { offset: xrefOffset, gen: 0 });
  const groups = subsections([...offsets.keys()]);
  const rows: Buffer[] = [];
  for (const [, nums] of groups) {
    for (const n of nums) {
      const e = offsets.get(n) as { offset: number; gen: number };
      const row = Buffer.alloc(7);
      row.writeUInt8(1, 0);
      row.writeUInt32BE(e.offset, 1);
      row.writeUInt16BE(e.gen, 5);
      rows.push(row);
    }
  }
  const data = Buffer.concat(rows);
  const index = groups.map(([start, nums]) => `${start} ${nums.length}`).join(' ');
  return Buffer.concat([
    Buffer.from(
      `${xrefNum} 0 obj\n<< /Type /XRef /Size ${xrefNum + 1} /W [1 4 2] /Index [${index}] ${common} /Length ${data.length} >>\nstream\n`,
      'latin1',
    ),
    data,
    Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefOffset}\n%%EOF\n`, 'latin1'),
  ]);
}

/** Keeps the permanent first identifier and derives the changing second one from this update's objects. */
function fileId(revision: PdfRevision, updateDigest: string): string {
  const existing = revision.trailer.id;
  const first =
    existing instanceof PDFArray
      ? existing.get(0).toString()
      : PDFHexString.of(updateDigest.toUpperCase()).toString();
  return `[${first} <${updateDigest.toUpperCase()}>]`;
}

function subsections(numbers: number[]): [number, number[]][] {
  const sorted = [...numbers].sort((a, b) => a - b);
  const out: [number, number[]][] = [];
  for (const n of sorted) {
    const last = out[out.length - 1];
    if (last && last[1][last[1].length - 1] === n - 1) last[1].push(n);
    else out.push([n, [n]]);
  }
  return out;
}
