import { createHash } from 'node:crypto';
import { PDFArray, PDFDict, PDFHexString, PDFName, PDFNumber, PDFRef, PDFString } from 'pdf-lib';
import { type PdfRevision, markDirty, openRevision } from '../writer/pdf-revision.ts';
import { writeIncrement } from '../writer/write-increment.ts';
import { OID, buildSignedData } from './cms.ts';
import type { Signer } from './signer.ts';
import { fetchTimestampToken } from './timestamp.ts';

export interface SignOptions {
  signer: Signer;
  /** Written as the signature dictionary's /M (PAdES keeps it out of the CMS). */
  signingTime: Date;
  /** RFC 3161 time-stamp authority: the token goes in as an unsigned attribute (PAdES B-T). */
  tsaUrl?: string;
  tsaTimeoutMs?: number;
  reason?: string;
}

/** What preparing the signature needs of the signer: its certificates (for the room to reserve) and name. */
export type SignerIdentity = Pick<Signer, 'certificate' | 'chain' | 'subject'>;

/** What `applySignature` put in besides the signature: the RFC 3161 token when a time-stamp was asked for. */
export interface AppliedSignature {
  timestampToken: Buffer | null;
}

/** The options of `prepareSignature`, which does not sign: the private key can stay in another thread. */
export type PrepareOptions = Omit<SignOptions, 'signer'> & { signer: SignerIdentity };

export interface PreparedSignature {
  raw: Map<number, Buffer>;
  sigObjectNumber: number;
  /** Offsets inside the raw signature object. */
  byteRangeAt: number;
  byteRangeLength: number;
  contentsAt: number;
  contentsLength: number;
}

export const BYTE_RANGE_PLACEHOLDER = '[0 0000000000 0000000000 0000000000]';

/** Room for the CMS: the certificates, the signature, the attributes, and a time-stamp token when asked for. */
function reservedBytes(opts: PrepareOptions): number {
  const certs = [opts.signer.certificate, ...opts.signer.chain].reduce((n, c) => n + c.length, 0);
  return 4096 + certs + (opts.tsaUrl ? 20_480 : 0);
}

/**
 * Adds an invisible signature field (on the last page) whose value is `sigRef`, and the AcroForm entry; the field
 * is named `baseName`, or `baseName 2`, 3... when taken. Also used for document time-stamps (ltv/).
 */
export function addSignatureField(revision: PdfRevision, sigRef: PDFRef, baseName: string): void {
  const { context, doc } = revision;
  const catalogRef = revision.trailer.root;
  const catalog = context.lookup(catalogRef, PDFDict);

  const pages = doc.getPages();
  const lastPage = pages[pages.length - 1];
  if (!lastPage) throw new Error('a PDF without pages cannot be signed');

  let form = catalog.lookup(PDFName.of('AcroForm'));
  const formEntry = catalog.get(PDFName.of('AcroForm'));
  if (!(form instanceof PDFDict)) {
    form = context.obj({ Fields: [] });
    catalog.set(PDFName.of('AcroForm'), context.register(form));
    markDirty(revision, catalogRef);
  } else if (formEntry instanceof PDFRef) markDirty(revision, formEntry);
  else markDirty(revision, catalogRef);
  const acroForm = form as PDFDict;

  const fieldsEntry = acroForm.get(PDFName.of('Fields'));
  let fields = context.lookup(fieldsEntry);
  if (!(fields instanceof PDFArray)) {
    fields = context.obj([]);
    acroForm.set(PDFName.of('Fields'), fields);
  } else if (fieldsEntry instanceof PDFRef) markDirty(revision, fieldsEntry);
  const fieldArray = fields as PDFArray;

  const taken = new Set(
    fieldArray
      .asArray()
      .map((f) => context.lookup(f))
      .map((f) => (f instanceof PDFDict ? f.lookup(PDFName.of('T')) : undefined))
      .map((t) => (t instanceof PDFString || t instanceof PDFHexString ? t.decodeText() : '')),
  );
  let name = baseName;
  for (let i = 2; taken.has(name); i++) name = `${baseName} ${i}`;

  const widgetRef = context.register(
    context.obj({
      Type: 'Annot',
      Subtype: 'Widget',
      FT: 'Sig',
      T: PDFHexString.fromText(name),
      V: sigRef,
      F: 132, // Print | Locked
      Rect: [0, 0, 0, 0],
      P: lastPage.ref,
    }),
  );
  fieldArray.push(widgetRef);
  acroForm.set(PDFName.of('SigFlags'), PDFNumber.of(3)); // SignaturesExist | AppendOnly

  const page = lastPage.node;
  const annotsEntry = page.get(PDFName.of('Annots'));
  const annots = context.lookup(annotsEntry);
  if (annots instanceof PDFArray) {
    annots.push(widgetRef);
    markDirty(revision, annotsEntry instanceof PDFRef ? annotsEntry : lastPage.ref);
  } else {
    page.set(PDFName.of('Annots'), context.obj([widgetRef]));
    markDirty(revision, lastPage.ref);
  }
}

/**
 * Adds to the revision an invisible signature field (on the last page), the AcroForm entry and a signature
 * dictionary with placeholders for /ByteRange and /Contents; the dictionary is returned raw so its offsets are
 * known after writing.
 */
export function prepareSignature(
  revision: PdfRevision,
  opts: PrepareOptions,
  reserve = reservedBytes(opts),
): PreparedSignature {
  const sigRef = revision.context.nextRef();
  addSignatureField(revision, sigRef, 'Wathiq seal');

  const head = [
    '<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached',
    ` /M ${PDFString.fromDate(opts.signingTime).toString()}`,
    opts.reason ? ` /Reason ${PDFHexString.fromText(opts.reason).toString()}` : '',
    ` /Name ${PDFHexString.fromText(opts.signer.subject).toString()}`,
    ' /ByteRange ',
  ].join('');
  const mid = ' /Contents <';
  const tail = '> >>';
  const raw = Buffer.from(
    `${head}${BYTE_RANGE_PLACEHOLDER}${mid}${'0'.repeat(reserve * 2)}${tail}`,
    'latin1',
  );
  return {
    raw: new Map([[sigRef.objectNumber, raw]]),
    sigObjectNumber: sigRef.objectNumber,
    byteRangeAt: head.length,
    byteRangeLength: BYTE_RANGE_PLACEHOLDER.length,
    contentsAt: head.length + BYTE_RANGE_PLACEHOLDER.length + mid.length - 1,
    contentsLength: reserve * 2 + 2,
  };
}

export class SignatureTooLargeError extends Error {
  constructor(size: string) {
    super(`the CMS signature (${size}) is larger than the space reserved for it`);
    this.name = 'SignatureTooLargeError';
  }
}

/** Where, in a written file, the signature's /ByteRange and /Contents placeholders are. */
export interface SignaturePlaceholder {
  byteRangeAt: number;
  byteRangeLength: number;
  /** The '<' of the /Contents hex string. */
  contentsAt: number;
  /** Its length with both angle brackets. */
  contentsLength: number;
}

/**
 * Fills in /ByteRange (everything but the /Contents hex string) and /Contents (the CMS over those bytes) of a
 * written file, in place.
 */
export async function applySignature(
  pdf: Buffer,
  placeholder: SignaturePlaceholder,
  opts: SignOptions,
): Promise<AppliedSignature> {
  const digest = fillByteRange(pdf, placeholder);
  let timestampToken: Buffer | null = null;
  const cms = await buildSignedData({
    contentDigest: digest,
    contentType: OID.data,
    certificate: opts.signer.certificate,
    chain: opts.signer.chain,
    signer: opts.signer,
    unsignedAttributes: opts.tsaUrl
      ? async (signature) => {
          const imprint = createHash('sha256').update(signature).digest();
          const token = await fetchTimestampToken(opts.tsaUrl as string, imprint, opts.tsaTimeoutMs);
          timestampToken = token;
          return [{ type: OID.signatureTimeStampToken, value: token }];
        }
      : undefined,
  });
  fillContents(pdf, placeholder, cms);
  return { timestampToken };
}

/** Writes /ByteRange (everything but the /Contents hex string) in place; returns the SHA-256 of those bytes. */
export function fillByteRange(pdf: Buffer, placeholder: SignaturePlaceholder): Buffer {
  const gapStart = placeholder.contentsAt;
  const gapEnd = gapStart + placeholder.contentsLength;
  const range = `[0 ${gapStart} ${gapEnd} ${pdf.length - gapEnd}]`;
  if (range.length > placeholder.byteRangeLength)
    throw new Error('file too large for the byte range placeholder');
  pdf.write(range.padEnd(placeholder.byteRangeLength, ' '), placeholder.byteRangeAt, 'latin1');
  return createHash('sha256').update(pdf.subarray(0, gapStart)).update(pdf.subarray(gapEnd)).digest();
}

/** Writes a CMS (or time-stamp token) into the /Contents placeholder, in place. */
export function fillContents(pdf: Buffer, placeholder: SignaturePlaceholder, cms: Buffer): void {
  const hex = cms.toString('hex').toUpperCase();
  if (hex.length > placeholder.contentsLength - 2) throw new SignatureTooLargeError(`${cms.length} bytes`);
  pdf.write(hex, placeholder.contentsAt + 1, 'latin1');
}

/**
 * Writes the revision as an incremental update carrying a prepared (unsigned) signature dictionary, and says
 * where its placeholders are. The untrusted-PDF part of signing: `applySignature` then needs only the bytes.
 */
export function writePrepared(
  revision: PdfRevision,
  opts: PrepareOptions,
): { pdf: Buffer; placeholder: SignaturePlaceholder } {
  const prepared = prepareSignature(revision, opts);
  const { pdf, rawOffsets } = writeIncrement(revision, prepared.raw);
  const sigOffset = rawOffsets.get(prepared.sigObjectNumber);
  if (sigOffset === undefined) throw new Error('signature dictionary was not written');
  return {
    pdf,
    placeholder: {
      byteRangeAt: sigOffset + prepared.byteRangeAt,
      byteRangeLength: prepared.byteRangeLength,
      contentsAt: sigOffset + prepared.contentsAt,
      contentsLength: prepared.contentsLength,
    },
  };
}

/** Writes the revision as an incremental update carrying the prepared signature, then signs it. */
export async function writeSigned(revision: PdfRevision, opts: SignOptions): Promise<Buffer> {
  const { pdf, placeholder } = writePrepared(revision, opts);
  await applySignature(pdf, placeholder, opts);
  return pdf;
}

/**
 * Signs a PDF (PAdES B-B, or B-T with a time-stamp authority): one incremental update with a signature covering
 * the whole file. The original bytes are kept as they are, so earlier signatures stay valid.
 */
export async function signPdf(args: { pdf: Uint8Array } & SignOptions): Promise<Buffer> {
  const { pdf, ...opts } = args;
  const revision = await openRevision(pdf, { allowRewrite: false });
  return writeSigned(revision, opts);
}
