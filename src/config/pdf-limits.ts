/** The shape and defaults of the PDF_* variables, apart from their schema: PDF worker threads load this alone. */

/** What the pre-scan of the raw bytes enforces before pdf-lib decodes anything (see src/pdf/prescan.ts). */
export interface DecodeLimits {
  /** The total that object and cross-reference streams may expand to, in bytes, whatever the file's size. */
  maxDecodedBytes: number;
  /** ... and at most this many times the file's size. */
  maxDecodeRatio: number;
  /** Filters in one stream's /Filter chain. */
  maxFilters: number;
  /** Indirect objects: top-level ones plus those the object streams declare (/N). */
  maxObjects: number;
  maxObjectStreams: number;
}

/** One worker pool: its threads, and what one task may take before its thread is terminated. */
export interface WorkerLimits {
  /** Tasks running at once (one thread each). */
  concurrency: number;
  /** Wall-clock time of one task, from the moment it has a thread. */
  timeoutMs: number;
  /** V8 old-generation heap of one thread (`resourceLimits.maxOldGenerationSizeMb`). */
  memoryMb: number;
}

/** What reading one untrusted PDF may cost, at upload and at finalization. */
export interface PdfLimits {
  decode: DecodeLimits;
  /** At upload, in the API process: past `concurrency` the answer is 503. */
  inspection: WorkerLimits;
  /** Finalization, in the Temporal worker process: past `concurrency` tasks wait for a thread. */
  finalization: WorkerLimits;
}

/** The defaults of the PDF_* variables; the in-process functions (`inspectPdf`, `finalizeDocument`) fall back on them. */
export const PDF_LIMIT_DEFAULTS = {
  maxDecodedMb: 128,
  maxDecodeRatio: 16,
  maxFilters: 2,
  maxObjects: 200_000,
  maxObjectStreams: 10_000,
  workerTimeoutMs: 15_000,
  workerMemoryMb: 256,
  maxConcurrentInspections: 2,
  finalizeTimeoutMs: 120_000,
  finalizeMemoryMb: 512,
  maxConcurrentFinalizations: 2,
} as const;
