import { createHash } from 'node:crypto';
import { composeInto } from './compose/compose-final-pdf.ts';
import { EncryptedPDFError } from 'pdf-lib';
import { REASONS, hasSignature, inspectLoaded } from './inspect-pdf.ts';
import { DEFAULT_DECODE_LIMITS, type DecodeLimits, PdfLimitError } from './limits.ts';
import { type SignatureLevel, extendToLevel, needsTimestamp } from './ltv/extend.ts';
import { archiveTimestampExpiry } from './ltv/renew.ts';
import { DEFAULT_REVOCATION_OPTIONS } from './ltv/revocation.ts';
import { checkDecodeLimits } from './prescan.ts';
import {
  type SignOptions,
  type SignaturePlaceholder,
  type SignerIdentity,
  applySignature,
  writePrepared,
} from './sign/sign-pdf.ts';
import { timestampAuthorityOf } from './sign/signature-info.ts';
import { FinalizeError } from './finalize-errors.ts';
import type { FinalizeInput, FinalizeResult } from './types.ts';
import { type PdfRevision, openRevision } from './writer/pdf-revision.ts';

export { FinalizeError };

/**
 * The part of finalization that reads the untrusted original (run in a worker thread by the finalize activity):
 * everything but the private key. Plain data, so it crosses to a worker as it is.
 */
export type ComposeTask = Omit<FinalizeInput, 'signer'> & {
  signer: SignerIdentity;
  /** The same limits as at upload, so a file accepted there passes here; defaults to the configured defaults. */
  limits?: DecodeLimits;
};

/** The composed final PDF, its signature dictionary written with placeholders, not yet signed. */
export interface ComposedFinal {
  pdf: Uint8Array;
  placeholder: SignaturePlaceholder;
  pageCount: number;
  /** What could not be drawn as given (an unreadable approver image), for the log. */
  warnings: string[];
}

/**
 * Produces the final signed PDF of an approved document: the original file kept byte for byte, followed by one
 * incremental update that adds the approvers' marks, the signatures page(s), the bilingual audit certificate
 * and a PAdES signature (B-B, or B-T with `tsaUrl`) over the whole file; for B-LT and B-LTA (options.signatureLevel)
 * further updates add the validation data and a document time-stamp.
 *
 * Deterministic for the same input without a time-stamp authority (an RSA key signs deterministically), so a
 * retried activity produces the same bytes. Errors of type FinalizeError and FinalizeInputError are permanent;
 * others (a time-stamp authority that does not answer) are worth retrying.
 *
 * In process: `composeFinal` then `signFinal`. The activity runs `composeFinal` in a worker thread instead.
 */
export async function finalizeDocument(
  input: FinalizeInput,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
): Promise<FinalizeResult> {
  const { signer, ...rest } = input;
  const identity = { certificate: signer.certificate, chain: signer.chain, subject: signer.subject };
  return signFinal(await composeFinal({ ...rest, signer: identity, limits }), input);
}

/** Checks and opens the original, adds the approval's pages and marks, and writes them with an unsigned signature. */
export async function composeFinal(task: ComposeTask): Promise<ComposedFinal> {
  const original = task.original;
  const actual = createHash('sha256').update(original).digest('hex');
  if (actual !== task.document.originalSha256.toLowerCase()) {
    throw new FinalizeError(
      'original_changed',
      `The stored original's SHA-256 is ${actual}, not the recorded ${task.document.originalSha256}.`,
    );
  }
  try {
    await checkDecodeLimits(original, task.limits ?? DEFAULT_DECODE_LIMITS);
  } catch (err) {
    if (err instanceof PdfLimitError) throw new FinalizeError('original_refused', err.message);
    throw err;
  }
  let revision: PdfRevision;
  try {
    // A file that is already signed must be updated in place, or its signature would break.
    revision = await openRevision(original, { allowRewrite: (doc) => !hasSignature(doc) });
  } catch (err) {
    const reason = err instanceof EncryptedPDFError ? REASONS.encrypted : REASONS.damaged;
    throw new FinalizeError('original_refused', reason);
  }
  const inspection = inspectLoaded(revision.doc);
  if (!inspection.ok) throw new FinalizeError('original_refused', inspection.reason);

  const { pageCount, warnings } = await composeInto(revision, task);
  const { pdf, placeholder } = writePrepared(revision, { ...signatureOptions(task), signer: task.signer });
  return { pdf, placeholder, pageCount, warnings };
}

/**
 * Signs a composed final PDF in place: the digest, the CMS with the private key, and the time-stamp if asked; then,
 * for B-LT and B-LTA, appends the validation data (and the document time-stamp) as further incremental updates.
 * A certificate found revoked fails with LtvError before any signed file leaves this function.
 */
export async function signFinal(composed: ComposedFinal, input: FinalizeInput): Promise<FinalizeResult> {
  const signed = Buffer.from(composed.pdf.buffer, composed.pdf.byteOffset, composed.pdf.byteLength);
  const options = signatureOptions(input);
  const applied = await applySignature(signed, composed.placeholder, { ...options, signer: input.signer });
  const level = signatureLevelOf(input);
  const pdf = await extendToLevel(signed, level, {
    tsaUrl: options.tsaUrl ?? '',
    tsaTimeoutMs: options.tsaTimeoutMs,
    revocation: input.options?.revocation ?? DEFAULT_REVOCATION_OPTIONS,
  });
  return {
    pdf,
    sha256: createHash('sha256').update(pdf).digest('hex'),
    pageCount: composed.pageCount,
    warnings: composed.warnings,
    signatureLevel: level,
    signedAt: options.signingTime,
    timestampAuthority: applied.timestampToken ? timestampAuthorityOf(applied.timestampToken) : null,
    ...(level === 'B-LTA' ? { archiveTimestampExpiresAt: await archiveTimestampExpiry(pdf) } : {}),
  };
}

/** The level asked for: SIGNATURE_LEVEL, else B-T with a time-stamp authority and B-B without. */
export function signatureLevelOf(input: Pick<FinalizeInput, 'options'>): SignatureLevel {
  const level = input.options?.signatureLevel ?? (input.options?.tsaUrl ? 'B-T' : 'B-B');
  if (needsTimestamp(level) && !input.options?.tsaUrl)
    throw new Error(`signature level ${level} needs a time-stamp authority (TSA_URL)`);
  return level;
}

function signatureOptions(input: Pick<FinalizeInput, 'document' | 'options'>): Omit<SignOptions, 'signer'> {
  const level = signatureLevelOf(input);
  return {
    signingTime: input.options?.now ?? input.document.completedAt,
    tsaUrl: needsTimestamp(level) ? input.options?.tsaUrl : undefined,
    tsaTimeoutMs: input.options?.tsaTimeoutMs,
    reason: `${input.document.reference}: approved by all approvers (Wathiq)`,
  };
}
