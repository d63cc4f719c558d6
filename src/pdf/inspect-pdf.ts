import {
  EncryptedPDFError,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFNumber,
  type PDFObject,
} from 'pdf-lib';
import { DEFAULT_DECODE_LIMITS, type DecodeLimits, MAX_PDF_PAGES, PdfLimitError } from './limits.ts';
import { checkDecodeLimits } from './prescan.ts';
import { checkXref } from './writer/pdf-revision.ts';

export { MAX_PDF_PAGES };

export type PdfInspection = { ok: true; pageCount: number; signed: boolean } | { ok: false; reason: string };

const MAGIC = Buffer.from('%PDF-', 'latin1');
const EOF_MARKER = Buffer.from('%%EOF', 'latin1');
const STARTXREF = Buffer.from('startxref', 'latin1');
/** Writers append padding after %%EOF; a marker further from the end than this means the tail is missing. */
const TAIL_WINDOW = 4096;

export const REASONS = {
  notPdf: 'The file is not a PDF (it does not start with %PDF-).',
  damaged: 'The PDF is truncated or damaged and could not be read.',
  encrypted: 'The PDF is encrypted; upload it without a password.',
  noPages: 'The PDF has no pages.',
  tooManyPages: (n: number) => `The PDF has ${n} pages; at most ${MAX_PDF_PAGES} pages are accepted.`,
  signedDamaged:
    'The PDF is already signed, but its internal structure is damaged, so another signature cannot be added without breaking the existing one; upload the document before it was signed.',
  certified:
    'The PDF is certified by its author against changes, so signatures cannot be added to it; upload a copy without the certification.',
} as const;

/**
 * Decides at upload whether the finalizer can later sign this file validly, and says why not in words the
 * uploader can act on. Never throws for bad input. Nothing is decoded before the pre-scan has bounded what
 * decoding will cost (`limits`); the time and memory it takes are bounded by running it in a worker thread
 * (see workers/pdf-workers.ts).
 */
export async function inspectPdf(
  bytes: Uint8Array,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
): Promise<PdfInspection> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    return refuse(REASONS.notPdf);
  }
  const tail = buf.subarray(Math.max(0, buf.length - TAIL_WINDOW));
  if (tail.lastIndexOf(EOF_MARKER) < 0 || tail.lastIndexOf(STARTXREF) < 0) {
    return refuse(looksEncrypted(buf) ? REASONS.encrypted : REASONS.damaged);
  }

  try {
    await checkDecodeLimits(bytes, limits);
  } catch (err) {
    if (err instanceof PdfLimitError) return refuse(err.message);
    throw err;
  }

  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(bytes, {
      ignoreEncryption: true,
      throwOnInvalidObject: true,
      updateMetadata: false,
    });
  } catch (err) {
    if (err instanceof EncryptedPDFError || looksEncrypted(buf)) return refuse(REASONS.encrypted);
    return refuse(REASONS.damaged);
  }
  const inspection = inspectLoaded(doc);
  if (inspection.ok && inspection.signed && !checkXref(bytes).ok) return refuse(REASONS.signedDamaged);
  return inspection;
}

/** The checks that need the parsed document (also used by the finalizer, which has parsed it already). */
export function inspectLoaded(doc: PDFDocument): PdfInspection {
  if (doc.isEncrypted) return refuse(REASONS.encrypted);
  let pageCount: number;
  try {
    pageCount = countPages(doc);
  } catch {
    return refuse(REASONS.damaged);
  }
  if (pageCount === 0) return refuse(REASONS.noPages);
  if (pageCount > MAX_PDF_PAGES) return refuse(REASONS.tooManyPages(pageCount));

  if (isCertified(doc)) return refuse(REASONS.certified);
  return { ok: true, pageCount, signed: hasSignature(doc) };
}

function refuse(reason: string): PdfInspection {
  return { ok: false, reason };
}

/** The encryption dictionary sits in the trailer, which may be unreadable (encrypted object streams). */
function looksEncrypted(buf: Buffer): boolean {
  const at = buf.lastIndexOf('/Encrypt');
  if (at < 0) return false;
  return /^\/Encrypt\s*(\d+\s+\d+\s+R|<<)/.test(buf.toString('latin1', at, at + 40));
}

/**
 * Walks the page tree itself, checking every leaf has a usable media box, so a broken tree is found here and not
 * when the finalizer appends pages. Guards against cycles.
 */
function countPages(doc: PDFDocument): number {
  const context = doc.context;
  const root = doc.catalog.lookup(PDFName.of('Pages'));
  if (!(root instanceof PDFDict)) throw new Error('no page tree');
  const seen = new Set<PDFObject>();
  let count = 0;
  const walk = (node: PDFDict, inheritedBox: boolean): void => {
    if (seen.has(node)) throw new Error('page tree cycle');
    seen.add(node);
    const hasBox = inheritedBox || isBox(node.lookup(PDFName.of('MediaBox')));
    const type = node.lookup(PDFName.of('Type'));
    const kids = node.lookup(PDFName.of('Kids'));
    if (type === PDFName.of('Page') || (type === undefined && !(kids instanceof PDFArray))) {
      if (!hasBox) throw new Error('page without a media box');
      count += 1;
      if (count > MAX_PDF_PAGES) return;
      return;
    }
    if (!(kids instanceof PDFArray)) throw new Error('page tree node without kids');
    for (let i = 0; i < kids.size() && count <= MAX_PDF_PAGES; i++) {
      const kid = context.lookup(kids.get(i));
      if (!(kid instanceof PDFDict)) throw new Error('page tree kid is not a dictionary');
      walk(kid, hasBox);
    }
  };
  walk(root, false);
  if (count > MAX_PDF_PAGES) {
    // The tree's own /Count gives the real number for the message.
    const declared = root.lookup(PDFName.of('Count'));
    return declared instanceof PDFNumber ? Math.max(declared.asNumber(), count) : count;
  }
  return count;
}

function isBox(obj: PDFObject | undefined): boolean {
  if (!(obj instanceof PDFArray) || obj.size() !== 4) return false;
  const n: number[] = [];
  for (let i = 0; i < 4; i++) {
    const v = obj.lookup(i);
    if (!(v instanceof PDFNumber) || !Number.isFinite(v.asNumber())) return false;
    n.push(v.asNumber());
  }
  const [x1 = 0, y1 = 0, x2 = 0, y2 = 0] = n;
  return Math.abs(x2 - x1) >= 1 && Math.abs(y2 - y1) >= 1;
}

function acroFormFields(doc: PDFDocument): PDFDict[] {
  const form = doc.catalog.lookup(PDFName.of('AcroForm'));
  if (!(form instanceof PDFDict)) return [];
  const fields = form.lookup(PDFName.of('Fields'));
  if (!(fields instanceof PDFArray)) return [];
  const out: PDFDict[] = [];
  const seen = new Set<PDFDict>();
  const visit = (arr: PDFArray, depth: number): void => {
    if (depth > 32) return;
    for (const item of arr.asArray()) {
      const field = doc.context.lookup(item);
      if (!(field instanceof PDFDict) || seen.has(field)) continue;
      seen.add(field);
      out.push(field);
      const kids = field.lookup(PDFName.of('Kids'));
      if (kids instanceof PDFArray) visit(kids, depth + 1);
    }
  };
  visit(fields, 0);
  return out;
}

/** Signed means a signature field carries a value; an empty signature field is only an invitation to sign. */
export function hasSignature(doc: PDFDocument): boolean {
  return acroFormFields(doc).some(
    (f) => f.lookup(PDFName.of('FT')) === PDFName.of('Sig') && f.lookup(PDFName.of('V')) instanceof PDFDict,
  );
}

/**
 * A certification (DocMDP) signature forbids adding pages at every permission level, so our signatures page would
 * break it.
 */
function isCertified(doc: PDFDocument): boolean {
  const perms = doc.catalog.lookup(PDFName.of('Perms'));
  return perms instanceof PDFDict && perms.lookup(PDFName.of('DocMDP')) !== undefined;
}
