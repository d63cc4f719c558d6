import { createHash } from 'node:crypto';
import { composeInto } from './compose/compose-final-pdf.ts';
import { EncryptedPDFError } from 'pdf-lib';
import { REASONS, hasSignature, inspectLoaded } from './inspect-pdf.ts';
import { writeSigned } from './sign/sign-pdf.ts';
import type { FinalizeInput, FinalizeResult } from './types.ts';
import { type PdfRevision, openRevision } from './writer/pdf-revision.ts';

export class FinalizeError extends Error {
  constructor(
    readonly code: 'original_changed' | 'original_refused',
    message: string,
  ) {
    super(message);
    this.name = 'FinalizeError';
  }
}

/**
 * Produces the final signed PDF of an approved document: the original file kept byte for byte, followed by one
 * incremental update that adds the approvers' marks, the signatures page(s), the bilingual audit certificate
 * and a PAdES signature (B-B, or B-T with `tsaUrl`) over the whole file.
 *
 * Deterministic for the same input without a time-stamp authority (an RSA key signs deterministically), so a
 * retried activity produces the same bytes. Errors of type FinalizeError and FinalizeInputError are permanent;
 * others (a time-stamp authority that does not answer) are worth retrying.
 */
export async function finalizeDocument(input: FinalizeInput): Promise<FinalizeResult> {
  const original = input.original;
  const actual = createHash('sha256').update(original).digest('hex');
  if (actual !== input.document.originalSha256.toLowerCase()) {
    throw new FinalizeError(
      'original_changed',
      `The stored original's SHA-256 is ${actual}, not the recorded ${input.document.originalSha256}.`,
    );
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

  const { pageCount, warnings } = await composeInto(revision, input);
  const pdf = await writeSigned(revision, {
    signer: input.signer,
    signingTime: input.options?.now ?? input.document.completedAt,
    tsaUrl: input.options?.tsaUrl,
    tsaTimeoutMs: input.options?.tsaTimeoutMs,
    reason: `${input.document.reference}: approved by all approvers (Wathiq)`,
  });
  return { pdf, sha256: createHash('sha256').update(pdf).digest('hex'), pageCount, warnings };
}
