import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from 'pdf-lib';
import { child, children, oidString, readNode, tagged } from './der.ts';

const SIGNATURE_TIME_STAMP = '1.2.840.113549.1.9.16.2.14';

/** A signature or document time-stamp of a PDF: its /SubFilter and the CMS of its /Contents. */
export interface PdfSignature {
  subFilter: string;
  /** The CMS ContentInfo (the /Contents without its zero padding). */
  cms: Buffer;
}

/** The signatures and document time-stamps of a PDF (the values of its signature fields), in field order. */
export async function pdfSignatures(pdf: Uint8Array): Promise<PdfSignature[]> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, throwOnInvalidObject: false });
  const form = doc.catalog.lookup(PDFName.of('AcroForm'));
  if (!(form instanceof PDFDict)) return [];
  const fields = form.lookup(PDFName.of('Fields'));
  if (!(fields instanceof PDFArray)) return [];
  const out: PdfSignature[] = [];
  for (const ref of fields.asArray()) {
    const field = doc.context.lookup(ref);
    if (!(field instanceof PDFDict)) continue;
    const value = field.lookup(PDFName.of('V'));
    if (!(value instanceof PDFDict)) continue;
    const contents = value.lookup(PDFName.of('Contents'));
    const subFilter = value.lookup(PDFName.of('SubFilter'));
    if (!(contents instanceof PDFHexString || contents instanceof PDFString)) continue;
    const bytes = Buffer.from(contents.asBytes());
    if (bytes.length < 2) continue;
    out.push({
      subFilter: subFilter instanceof PDFName ? subFilter.decodeText() : '',
      cms: readNode(bytes, 0).raw,
    });
  }
  return out;
}

/**
 * The certificates a CMS SignedData carries, and those of the signature time-stamp tokens in its signers'
 * unsigned attributes (the time-stamp authority's), each list in the order found.
 */
export function cmsCertificates(cms: Buffer, depth = 0): Buffer[] {
  if (depth > 2) return [];
  const signedData = child(child(readNode(cms, 0), 1, 'content'), 0, 'SignedData');
  const out: Buffer[] = [];
  const certs = tagged(signedData, 0);
  if (certs) out.push(...children(certs).map((c) => Buffer.from(c.raw)));
  const signerInfos = children(signedData).at(-1);
  for (const info of signerInfos ? children(signerInfos) : []) {
    const unsigned = tagged(info, 1);
    for (const attr of unsigned ? children(unsigned) : []) {
      if (oidString(child(attr, 0)) !== SIGNATURE_TIME_STAMP) continue;
      for (const token of children(child(attr, 1)))
        out.push(...cmsCertificates(Buffer.from(token.raw), depth + 1));
    }
  }
  return out;
}

/** The genTime of a time-stamp token (a CMS whose content is a TSTInfo). */
export function timestampTime(token: Buffer): Date {
  const signedData = child(child(readNode(token, 0), 1, 'content'), 0, 'SignedData');
  const encap = child(signedData, 2, 'encapContentInfo');
  const octets = child(child(encap, 1, 'eContent'), 0);
  const info = children(readNode(octets.contents, 0));
  const genTime = info[4];
  if (!genTime) throw new Error('time-stamp token has no genTime');
  return new Date(
    genTime.contents
      .toString('latin1')
      .replace(/^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\.\d+)?Z$/, '$1-$2-$3T$4:$5:$6$7Z'),
  );
}
