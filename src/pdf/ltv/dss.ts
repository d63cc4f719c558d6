import { createHash } from 'node:crypto';
import { PDFArray, PDFDict, PDFName, PDFRawStream, type PDFRef } from 'pdf-lib';
import { markDirty, openRevision } from '../writer/pdf-revision.ts';
import { writeIncrement } from '../writer/write-increment.ts';

/** What goes into the Document Security Store (ETSI EN 319 142-1 5.4.2, ISO 32000-2 12.8.4.3). */
export interface ValidationData {
  certs: Buffer[];
  ocsps: Buffer[];
  crls: Buffer[];
}

const KEYS = { certs: 'Certs', ocsps: 'OCSPs', crls: 'CRLs' } as const;

const digest = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/**
 * Appends the validation data to the PDF's /DSS dictionary as an incremental update (a new DSS that keeps the
 * entries of the existing one, if any, and adds the new ones as streams; duplicates are left out). Earlier
 * signatures stay valid: the original bytes are kept.
 */
export async function appendDss(pdf: Uint8Array, data: ValidationData): Promise<Buffer> {
  const revision = await openRevision(pdf, { allowRewrite: false });
  const { context } = revision;
  const catalogRef = revision.trailer.root;
  const catalog = context.lookup(catalogRef, PDFDict);
  const existing = catalog.lookup(PDFName.of('DSS'));

  const dss = context.obj({});
  for (const [field, key] of Object.entries(KEYS) as [keyof ValidationData, string][]) {
    const refs: PDFRef[] = [];
    const seen = new Set<string>();
    const old = existing instanceof PDFDict ? existing.lookup(PDFName.of(key)) : undefined;
    if (old instanceof PDFArray) {
      for (const ref of old.asArray()) {
        const stream = context.lookup(ref);
        if (stream instanceof PDFRawStream) seen.add(digest(stream.getContents()));
        refs.push(ref as PDFRef);
      }
    }
    for (const item of data[field]) {
      const hash = digest(item);
      if (seen.has(hash)) continue;
      seen.add(hash);
      refs.push(context.register(context.stream(item)));
    }
    if (refs.length > 0) dss.set(PDFName.of(key), context.obj(refs));
  }
  dss.set(PDFName.of('Type'), PDFName.of('DSS'));
  catalog.set(PDFName.of('DSS'), context.register(dss));
  markDirty(revision, catalogRef);
  return writeIncrement(revision).pdf;
}
