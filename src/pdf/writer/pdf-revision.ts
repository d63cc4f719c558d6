import {
  PDFArray,
  PDFContext,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFObjectParser,
  PDFRawStream,
  PDFRef,
  PDFXRefStreamParser,
} from 'pdf-lib';

/**
 * An existing PDF opened for an incremental update (ISO 32000-1 7.5.6): pdf-lib holds its objects; new and changed
 * objects are appended after the original bytes, which stay untouched, with a cross-reference section that points
 * back to the file's last one.
 */
export interface PdfRevision {
  bytes: Uint8Array;
  doc: PDFDocument;
  context: PDFContext;
  /** Offset of the last cross-reference section (the file's startxref). */
  prevStartXref: number;
  /** Whether that section is a classic table or a cross-reference stream; the update uses the same kind. */
  xrefKind: 'table' | 'stream';
  trailer: { root: PDFRef; info?: PDFObject; id?: PDFObject; size: number };
  /** Objects numbered from here on are new in this update. */
  firstNewObjectNumber: number;
  /** Original objects changed in place; they are written again in the update. */
  dirty: Set<PDFRef>;
}

export class PdfStructureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PdfStructureError';
  }
}

const latin1 = (bytes: Uint8Array, start: number, end: number) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
    'latin1',
    start,
    Math.min(end, bytes.length),
  );

/** The offset after the file's last `startxref`, or undefined when the tail has none. */
export function lastStartXref(bytes: Uint8Array): number | undefined {
  const from = Math.max(0, bytes.length - 4096);
  const tail = latin1(bytes, from, bytes.length);
  const at = tail.lastIndexOf('startxref');
  if (at < 0) return undefined;
  const m = /^startxref\s+(\d+)/.exec(tail.slice(at));
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

interface XrefSection {
  kind: 'table' | 'stream';
  trailer: PDFDict;
  /** In-use entries stored at a byte offset: object number → offset. */
  entries: Map<number, number>;
}

/** The head of the cross-reference section at an offset: a table's trailer, or the cross-reference stream. */
export type XrefSectionHead = { kind: 'table'; trailer: PDFDict } | { kind: 'stream'; stream: PDFRawStream };

/**
 * Parses the section at an offset without decoding anything (the pre-scan walks the chain with it and charges
 * each cross-reference stream to the decode budget before `checkXref` decodes it).
 */
export function readXrefSectionHead(bytes: Uint8Array, offset: number, context: PDFContext): XrefSectionHead {
  if (offset <= 0 || offset >= bytes.length) throw new PdfStructureError('startxref points outside the file');
  const head = latin1(bytes, offset, offset + 64);
  if (/^xref\s/.test(head)) {
    const at = latin1(bytes, offset, bytes.length).indexOf('trailer');
    if (at < 0) throw new PdfStructureError('cross-reference table without trailer');
    const parser = PDFObjectParser.forBytes(bytes.subarray(offset + at + 'trailer'.length), context);
    const trailer = parser.parseObject();
    if (!(trailer instanceof PDFDict)) throw new PdfStructureError('trailer is not a dictionary');
    return { kind: 'table', trailer };
  }
  const m = /^(\d+)\s+(\d+)\s+obj\b/.exec(head);
  if (!m) throw new PdfStructureError('startxref does not point at a cross-reference section');
  const parser = PDFObjectParser.forBytes(bytes.subarray(offset + m[0].length), context);
  const stream = parser.parseObject();
  if (!(stream instanceof PDFRawStream) || stream.dict.lookup(PDFName.of('Type')) !== PDFName.of('XRef')) {
    throw new PdfStructureError('startxref does not point at a cross-reference stream');
  }
  return { kind: 'stream', stream };
}

/** The offsets of the sections that follow this one (/XRefStm, then /Prev), as `checkXref` visits them. */
export function nextXrefOffsets(trailer: PDFDict): number[] {
  const out: number[] = [];
  for (const key of ['XRefStm', 'Prev']) {
    const next = trailer.lookup(PDFName.of(key));
    if (next instanceof PDFNumber) out.push(next.asNumber());
  }
  return out;
}

/** Reads the cross-reference section at an offset (a table with its trailer, or a cross-reference stream). */
function readXrefSection(bytes: Uint8Array, offset: number, context: PDFContext): XrefSection {
  const section = readXrefSectionHead(bytes, offset, context);
  if (section.kind === 'table') {
    const at = latin1(bytes, offset, bytes.length).indexOf('trailer');
    const table = latin1(bytes, offset + 4, offset + at);
    const entries = new Map<number, number>();
    const tokens = table.trim().split(/\s+/);
    for (let i = 0; i + 1 < tokens.length;) {
      let start = Number(tokens[i]);
      const count = Number(tokens[i + 1]);
      if (!Number.isInteger(start) || !Number.isInteger(count) || count < 0) {
        throw new PdfStructureError('malformed cross-reference table');
      }
      i += 2;
      for (let k = 0; k < count; k++, start++, i += 3) {
        const [off, , type] = [tokens[i], tokens[i + 1], tokens[i + 2]];
        if (type === 'n') entries.set(start, Number(off));
        else if (type !== 'f') throw new PdfStructureError('malformed cross-reference entry');
      }
    }
    return { kind: 'table', trailer: section.trailer, entries };
  }
  const entries = new Map<number, number>();
  for (const e of PDFXRefStreamParser.forStream(section.stream).parseIntoContext()) {
    if (!e.deleted && !e.inObjectStream) entries.set(e.ref.objectNumber, e.offset);
  }
  return { kind: 'stream', trailer: section.stream.dict, entries };
}

/**
 * Follows the chain of cross-reference sections from startxref and checks that every in-use entry points at
 * its object. A file that fails is still readable (pdf-lib and viewers rebuild the table) but an update must not
 * point back into it.
 */
export function checkXref(
  bytes: Uint8Array,
):
  | { ok: true; kind: 'table' | 'stream'; startxref: number; trailer: PDFDict }
  | { ok: false; problem: string } {
  const context = PDFContext.create();
  const start = lastStartXref(bytes);
  if (start === undefined) return { ok: false, problem: 'no startxref' };
  try {
    const seen = new Set<number>();
    const pending = [start];
    let first: XrefSection | undefined;
    while (pending.length > 0) {
      const offset = pending.shift() as number;
      if (seen.has(offset)) continue;
      if (seen.size > 1000) throw new PdfStructureError('too many cross-reference sections');
      seen.add(offset);
      const section = readXrefSection(bytes, offset, context);
      first ??= section;
      for (const [num, off] of section.entries) {
        const m = /^\s*(\d+)\s+(\d+)\s+obj\b/.exec(latin1(bytes, off, off + 40));
        if (!m || Number(m[1]) !== num)
          throw new PdfStructureError(`object ${num} is not where the table says`);
      }
      pending.push(...nextXrefOffsets(section.trailer));
    }
    if (!first) return { ok: false, problem: 'no cross-reference section' };
    return { ok: true, kind: first.kind, startxref: start, trailer: first.trailer };
  } catch (err) {
    return { ok: false, problem: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Opens a PDF for an incremental update. A file whose cross-reference chain is broken is first rewritten whole by
 * pdf-lib (its content is the same), unless `allowRewrite` is false (an existing signature would be invalidated).
 */
export async function openRevision(
  bytes: Uint8Array,
  opts: { allowRewrite?: boolean | ((doc: PDFDocument) => boolean) } = {},
): Promise<PdfRevision> {
  let base = bytes;
  let xref = checkXref(base);
  let doc = await PDFDocument.load(base, { updateMetadata: false, throwOnInvalidObject: true });
  if (!xref.ok) {
    const allow =
      typeof opts.allowRewrite === 'function' ? opts.allowRewrite(doc) : opts.allowRewrite !== false;
    if (!allow) throw new PdfStructureError(`cannot update this PDF in place: ${xref.problem}`);
    base = await doc.save({ useObjectStreams: false, updateFieldAppearances: false });
    xref = checkXref(base);
    if (!xref.ok) throw new PdfStructureError(`rewritten PDF is still inconsistent: ${xref.problem}`);
    doc = await PDFDocument.load(base, { updateMetadata: false, throwOnInvalidObject: true });
  }
  const context = doc.context;
  const t = xref.trailer;
  const root = t.get(PDFName.of('Root'));
  if (!(root instanceof PDFRef)) throw new PdfStructureError('trailer has no /Root');
  const sizeObj = t.lookup(PDFName.of('Size'));
  const size = sizeObj instanceof PDFNumber ? sizeObj.asNumber() : 0;
  const firstNewObjectNumber = Math.max(size, context.largestObjectNumber + 1);
  context.largestObjectNumber = firstNewObjectNumber - 1;
  const id = t.lookup(PDFName.of('ID'));
  return {
    bytes: base,
    doc,
    context,
    prevStartXref: xref.startxref,
    xrefKind: xref.kind,
    trailer: {
      root,
      info: t.get(PDFName.of('Info')),
      id: id instanceof PDFArray && id.size() === 2 ? id : undefined,
      size,
    },
    firstNewObjectNumber,
    dirty: new Set(),
  };
}

/** Records that an original object was changed, so the update writes it again. */
export function markDirty(revision: PdfRevision, ref: PDFRef): void {
  if (ref.objectNumber < revision.firstNewObjectNumber) revision.dirty.add(ref);
}
