import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/activity';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import {
  type DocumentSignature,
  documentsStore,
  type Document,
  openFinalToken,
} from '../documents/documents-store.ts';
import type { Approver } from '../documents/approvers-store.ts';
import { verificationUrl, verificationsStore } from './verifications-store.ts';
import { isoTime } from '../../domain/time.ts';
import { finalFileKey, finalFileUrl, finalFilename } from '../documents/final-file.ts';
import type { Logger } from '../../logger.ts';
import type { FinalizationFailureReason, FinalizationMetrics } from '../../metrics/metrics.ts';
import {
  type CreateSignerOptions,
  FinalizeError,
  FinalizeInputError,
  type FinalizeInput,
  type FinalizeResult,
  type Signer,
  SignerConfigError,
  createSigner,
} from '../../pdf/index.ts';
import { certificateSummary } from '../../pdf/sign/signature-info.ts';
import { DEFAULT_PDF_LIMITS, type PdfLimits, PdfTooComplexError } from '../../pdf/limits.ts';
import type { SignatureLevel } from '../../pdf/ltv/levels.ts';
import { LtvError, type RevocationOptions } from '../../pdf/ltv/revocation.ts';
import {
  type FinalizeSlot,
  type SoonAdmission,
  type PdfFinalizer,
  PdfBusyError,
  PdfTaskCancelledError,
  createPdfFinalizer,
} from '../../pdf/workers/pdf-workers.ts';
import type { Storage } from '../../storage/storage.ts';
import { recordArchiveTimestamp } from './archive-renewal.ts';
import {
  type FinalizeRecord,
  FinalizeStateError,
  loadFinalizeInput,
  loadFinalizeRecord,
} from './finalize-input.ts';

/**
 * Failure types of finalization that retrying cannot fix; the workflow sees them as non-retryable and the document
 * goes to `finalization.state = "failed"` at once. A SignerConfigError (certificate or key missing, unreadable or
 * refused) is not among them: the operator fixes the certificate and the next attempt picks it up (`signerOnce`
 * keeps no failed load), until the activity's policy (APPROVAL_FINALIZE_RETRY_SECONDS) runs out.
 */
export const FINALIZE_FAILURE_TYPES = {
  FinalizeError: 'FinalizeError',
  FinalizeInputError: 'FinalizeInputError',
  FinalizeStateError: 'FinalizeStateError',
  PdfTooComplexError: 'PdfTooComplexError',
  /** B-LT/B-LTA: a certificate of the chain is revoked, or cannot be checked (LtvError's message says which). */
  LtvError: 'LtvError',
} as const;

export interface FinalizerDeps {
  db: Knex;
  storage: Storage;
  logger: Logger;
  /** Seals the file's and the verification page's tokens (the database keeps their digests and sealed copies). */
  secrets: SecretBox;
  /** The worker's signer, loaded once (see `signerOnce`). */
  signer: () => Promise<Signer>;
  publicBaseUrl: string;
  tsaUrl?: string;
  /** SIGNATURE_LEVEL; default B-T with tsaUrl, B-B without (config.signing.signatureLevel decides in the worker). */
  signatureLevel?: SignatureLevel;
  /** REVOCATION_*: OCSP and CRL fetching for B-LT and B-LTA. */
  revocation?: RevocationOptions;
  /** MAX_IMAGE_SIDE_PX: the same cap the approval page checked images against; default 4096. */
  maxImageSidePx?: number;
  /** The PDF_* limits (config.pdf): the original is read in a worker thread within them. Default: the defaults. */
  pdf?: PdfLimits;
  /** Durations of final PDFs produced, failures by type; absent, nothing is counted. */
  metrics?: FinalizationMetrics;
}

/** What finalization hands back to the approval activity. */
export interface FinalizedDocument {
  /** When the last approver acted: the document's completion time, as printed on the certificate. */
  completedAt: Date;
  /** Added to `data.document` of the `document.approved` event. */
  document: { download_url: string; filename: string; verification_url?: string };
  /**
   * The document's approvers as finalization read them: no action or delegation moves them once all have
   * completed, so the `document.approved` event and the signed copies take them instead of reading them again.
   */
  approvers: Approver[];
}

/**
 * The signing identity, loaded on first use and kept for the worker's life. A failed load is not kept, so a
 * certificate fixed by the operator is picked up by the next attempt.
 */
export function signerOnce(options: CreateSignerOptions): () => Promise<Signer> {
  let loading: Promise<Signer> | undefined;
  return () => {
    loading ??= createSigner(options).catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}

/** What a finalization answers: when the document completed, and its signed file's permanent URLs. */
function finalized(
  publicBaseUrl: string,
  doc: Document,
  token: string,
  record: FinalizeRecord,
  verifyToken: string | undefined,
): FinalizedDocument {
  return {
    completedAt: record.completedAt,
    approvers: record.all,
    document: {
      download_url: finalFileUrl(publicBaseUrl, token, doc),
      filename: finalFilename(doc),
      ...(verifyToken && { verification_url: verificationUrl(publicBaseUrl, verifyToken) }),
    },
  };
}

/**
 * Produces, signs and stores the final PDF of a document whose approvers have all completed, once.
 *
 * Idempotent across retries and crashes: the token and storage key are reserved on the document row first (only
 * while unset), the file is written under that one key (a repeat overwrites it with the same bytes, since
 * finalization is deterministic without a time-stamp authority), and `final_sha256` is set last. A run that finds
 * `final_sha256` set and the file present does nothing. So there is never a second file or a second URL.
 */
export function createFinalizer(
  deps: FinalizerDeps,
): (documentId: string, slot?: FinalizeSlot) => Promise<FinalizedDocument> {
  const { db, storage } = deps;
  // The original is read and composed in a worker thread (time, heap and decoding limited); signing stays here.
  const pdf = createPdfFinalizer(deps.pdf ?? DEFAULT_PDF_LIMITS, deps.logger);

  const outcome = (doc: Document, token: string, record: FinalizeRecord, verifyToken: string | undefined) =>
    finalized(deps.publicBaseUrl, doc, token, record, verifyToken);

  return async (documentId, slot) => {
    const started = performance.now();
    // Taking its thread soon, an attempt is admitted (or refused, PdfBusyError below) before any work: one refused
    // at the thread after its reads and reservations would leave the ordinary activity to do them again.
    let admission: SoonAdmission | undefined;
    try {
      if (slot?.whenBusy === 'soon') admission = pdf.admitSoon();
      const record = await loadFinalizeRecord(db, documentId);
      const doc = await reserve(db, record.document, deps.secrets);
      const token = openFinalToken(doc, deps.secrets)!;
      const key = doc.finalFileKey!;
      if (doc.finalSha256 && (await storage.stat(key))) {
        // Signed before the verification page existed: no token, none is made (the file does not print one).
        const existing = await verificationsStore(db).tokenOf(doc.id, deps.secrets);
        return outcome(doc, token, record, existing);
      }

      // The verification page's token is printed on the certificate, which is signed: reserved before composing,
      // and the same on every retry, so a retried finalization makes the same file.
      const verifyToken = await verificationsStore(db).reserve(doc.id, deps.secrets);
      const loaded = await loadFinalizeInput(db, storage, record);
      const input = {
        ...loaded,
        document: { ...loaded.document, verificationUrl: verificationUrl(deps.publicBaseUrl, verifyToken) },
      };
      const signer = await deps.signer();
      const result = await finalizeWithFallback(
        pdf.forAccount(doc.accountId), // queued fairly behind other accounts' finalizations
        { ...slot, admission },
        {
          ...input,
          signer,
          options: {
            tsaUrl: deps.tsaUrl,
            maxImageSidePx: deps.maxImageSidePx,
            ...(deps.signatureLevel ? { signatureLevel: deps.signatureLevel } : {}),
            ...(deps.revocation ? { revocation: deps.revocation } : {}),
          },
        },
        deps.logger,
      );
      for (const warning of result.warnings)
        deps.logger.warn({ documentId, reference: doc.reference }, warning);
      const stored = await storage.put(key, Readable.from([result.pdf]), { contentType: 'application/pdf' });
      if (stored.sha256 !== result.sha256) {
        throw new Error(`storage kept other bytes than were written under ${key}`); // retryable
      }
      // B-LTA: the archive renewal schedule renews the document time-stamp before its certificate expires.
      if (result.archiveTimestampExpiresAt)
        await recordArchiveTimestamp(db, doc.id, result.archiveTimestampExpiresAt);
      await documentsStore(db).recordFinalSha256(doc.id, token, result.sha256, signatureOf(result, signer));
      deps.logger.info(
        {
          documentId,
          reference: doc.reference,
          pages: result.pageCount,
          bytes: result.pdf.length,
          signer: signer.kind,
          level: result.signatureLevel,
        },
        'final PDF stored',
      );
      deps.metrics?.succeeded((performance.now() - started) / 1000);
      return outcome(doc, token, record, verifyToken);
    } catch (err) {
      // A local attempt that would have waited long for a PDF thread (slot.whenBusy `soon`) did not fail: the
      // ordinary activity takes over and waits its turn. Not counted as a failure.
      if (err instanceof PdfBusyError) throw ApplicationFailure.retryable(err.message, 'PdfBusyError');
      // Nor did one whose attempt timed out while it composed: its composition was stopped, not failed.
      if (err instanceof PdfTaskCancelledError)
        throw ApplicationFailure.retryable(err.message, 'PdfTaskCancelledError');
      const failure = asActivityFailure(err);
      deps.metrics?.failed(failureReason(failure), !isNonRetryable(failure));
      throw failure;
    } finally {
      admission?.cancel(); // when it ended before composing (a signed file found, a failure)
    }
  };
}

/** What the API and webhooks tell about the signature (`signature` of the document). */
function signatureOf(result: FinalizeResult, signer: Signer): DocumentSignature {
  const cert = certificateSummary(signer.certificate);
  return {
    level: result.signatureLevel,
    signed_at: isoTime(result.signedAt),
    certificate: {
      subject: cert.subject,
      issuer: cert.issuer,
      serial: cert.serial,
      not_after: isoTime(cert.not_after),
    },
    timestamp_authority: result.timestampAuthority,
  };
}

/** Sets the token and key once; a concurrent or retried run reads what the first one set. */
async function reserve(db: Knex, doc: Document, secrets: SecretBox): Promise<Document> {
  if (doc.finalTokenSealed && doc.finalFileKey) return doc;
  const reserved =
    (await documentsStore(db).reserveFinalFile(doc.id, finalFileKey(doc), secrets)) ??
    (await documentsStore(db).findByIdUnscoped(doc.id));
  if (!reserved?.finalTokenSealed || !reserved.finalFileKey)
    throw new Error(`could not reserve the final file of ${doc.id}`);
  return reserved;
}

/**
 * A placement is checked against the page only here, after every approver has acted; failing the whole approval
 * for it would strand the document. Such marks go to the signatures page instead (deterministically, so a retry
 * makes the same file).
 */
async function finalizeWithFallback(
  pdf: PdfFinalizer,
  slot: FinalizeSlot | undefined,
  input: FinalizeInput,
  logger: Logger,
): Promise<FinalizeResult> {
  try {
    return await pdf.finalize(input, slot);
  } catch (err) {
    if (!(err instanceof FinalizeInputError) || err.code !== 'invalid_placement') throw err;
    logger.warn(
      { reference: input.document.reference, reason: err.message },
      'placement does not fit: marks go to the signatures page',
    );
    return pdf.finalize(
      { ...input, approvers: input.approvers.map((a) => ({ ...a, placement: null })) },
      slot,
    );
  }
}

const PERMANENT: [new (...args: never[]) => Error, string][] = [
  [FinalizeError, FINALIZE_FAILURE_TYPES.FinalizeError],
  [FinalizeInputError, FINALIZE_FAILURE_TYPES.FinalizeInputError],
  [FinalizeStateError, FINALIZE_FAILURE_TYPES.FinalizeStateError],
  // The original exhausted its worker thread's time or memory: the same file would again.
  [PdfTooComplexError, FINALIZE_FAILURE_TYPES.PdfTooComplexError],
  // A revoked certificate stays revoked: the operator replaces it, then retries finalization.
  [LtvError, FINALIZE_FAILURE_TYPES.LtvError],
];

/** A failure's type as a bounded label: the permanent types, SignerConfigError, or `other`. */
function failureReason(failure: unknown): FinalizationFailureReason {
  if (!(failure instanceof ApplicationFailure)) return 'other';
  const known: readonly string[] = [...Object.values(FINALIZE_FAILURE_TYPES), 'SignerConfigError'];
  return known.includes(failure.type ?? '') ? (failure.type as FinalizationFailureReason) : 'other';
}

const isNonRetryable = (failure: unknown) => failure instanceof ApplicationFailure && failure.nonRetryable;

function asActivityFailure(err: unknown): unknown {
  // A signer misconfiguration: retryable, typed so the workflow's failure names it.
  if (err instanceof SignerConfigError)
    return ApplicationFailure.create({ type: 'SignerConfigError', message: err.message, cause: err });
  const permanent = PERMANENT.find(([type]) => err instanceof type);
  if (!permanent) return err; // TimestampError, storage and database errors: worth another attempt
  return ApplicationFailure.create({
    type: permanent[1],
    message: (err as Error).message,
    nonRetryable: true,
    cause: err as Error,
  });
}
