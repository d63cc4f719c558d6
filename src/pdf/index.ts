/**
 * The final-PDF module. Permanent failures (retrying cannot help): FinalizeError, FinalizeInputError,
 * PdfTooComplexError (a worker thread's time or memory ran out on the file), LtvError (B-LT/B-LTA: a certificate is
 * revoked or cannot be checked). Transient: RevocationFetchError (no OCSP responder or CRL answered), TimestampError (the
 * time-stamp authority did not answer), SignerConfigError (the operator can fix the certificate) and I/O errors.
 *
 * Untrusted files are read in worker threads (workers/pdf-workers.ts) after a pre-scan has bounded what decoding
 * them costs (prescan.ts), within the limits of limits.ts (config.pdf).
 */
export { MAX_PDF_PAGES, type PdfInspection, inspectPdf } from './inspect-pdf.ts';
export { FinalizeError, composeFinal, finalizeDocument, signFinal } from './finalize-document.ts';
export {
  DEFAULT_PDF_LIMITS,
  type DecodeLimits,
  PdfLimitError,
  type PdfLimits,
  PdfTooComplexError,
} from './limits.ts';
export {
  PdfBusyError,
  type PdfFinalizer,
  type PdfInspector,
  createPdfFinalizer,
  createPdfInspector,
} from './workers/pdf-workers.ts';
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
export { SIGNATURE_LEVELS, type SignatureLevel } from './ltv/levels.ts';
export { LtvError, RevocationFetchError, type RevocationOptions } from './ltv/revocation.ts';
export type * from './types.ts';
