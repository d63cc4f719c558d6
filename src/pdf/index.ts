/**
 * The final-PDF module. Permanent failures (retrying cannot help): FinalizeError, FinalizeInputError,
 * SignerConfigError. Transient: TimestampError (the time-stamp authority did not answer) and I/O errors.
 */
export { MAX_PDF_PAGES, type PdfInspection, inspectPdf } from './inspect-pdf.ts';
export { FinalizeError, finalizeDocument } from './finalize-document.ts';
export { composeFinalPdf } from './compose/compose-final-pdf.ts';
export { FinalizeInputError } from './compose/marks.ts';
export {
  type CreateSignerOptions,
  type Signer,
  SignerConfigError,
  createSigner,
  signerFromP12,
} from './sign/signer.ts';
export { type SignOptions, signPdf } from './sign/sign-pdf.ts';
export { TimestampError } from './sign/timestamp.ts';
export type * from './types.ts';
