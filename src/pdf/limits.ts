import { PDF_LIMIT_DEFAULTS, type DecodeLimits, type PdfLimits } from '../config/pdf-limits.ts';

/**
 * Limits on what one untrusted PDF may cost to read. Their types and defaults are those of the PDF_* variables
 * (src/config/pdf-limits.ts, one place), and the in-process functions (`inspectPdf`, `finalizeDocument`) fall back on them.
 */
export {
  PDF_LIMIT_DEFAULTS,
  type DecodeLimits,
  type PdfLimits,
  type WorkerLimits,
} from '../config/pdf-limits.ts';

const MiB = 1024 * 1024;

/** More pages than this and the upload is refused: the certificate and signatures pages stay a small share. */
export const MAX_PDF_PAGES = 500;

export const DEFAULT_DECODE_LIMITS: DecodeLimits = {
  maxDecodedBytes: PDF_LIMIT_DEFAULTS.maxDecodedMb * MiB,
  maxDecodeRatio: PDF_LIMIT_DEFAULTS.maxDecodeRatio,
  maxFilters: PDF_LIMIT_DEFAULTS.maxFilters,
  maxObjects: PDF_LIMIT_DEFAULTS.maxObjects,
  maxObjectStreams: PDF_LIMIT_DEFAULTS.maxObjectStreams,
};

export const DEFAULT_PDF_LIMITS: PdfLimits = {
  decode: DEFAULT_DECODE_LIMITS,
  inspection: {
    concurrency: PDF_LIMIT_DEFAULTS.maxConcurrentInspections,
    timeoutMs: PDF_LIMIT_DEFAULTS.workerTimeoutMs,
    memoryMb: PDF_LIMIT_DEFAULTS.workerMemoryMb,
  },
  finalization: {
    concurrency: PDF_LIMIT_DEFAULTS.maxConcurrentFinalizations,
    timeoutMs: PDF_LIMIT_DEFAULTS.finalizeTimeoutMs,
    memoryMb: PDF_LIMIT_DEFAULTS.finalizeMemoryMb,
  },
};

/** The decoded-bytes budget of one file: the ratio to its size, capped by the absolute bound. */
export function decodeBudget(fileBytes: number, limits: DecodeLimits): number {
  return Math.floor(Math.min(limits.maxDecodedBytes, limits.maxDecodeRatio * fileBytes));
}

/** 1536 → "1.5 KB", 3 MiB → "3 MB": the sizes quoted in refusals. */
export function formatBytes(n: number): string {
  const [value, unit] = n >= MiB ? [n / MiB, 'MB'] : n >= 1024 ? [n / 1024, 'KB'] : [n, 'bytes'];
  return `${Number(value.toFixed(value < 10 ? 2 : 1))} ${unit}`;
}

/** A file refused by a limit; the message is for the uploader (422 on `file`). */
export class PdfLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PdfLimitError';
  }
}

/** A worker thread ran out of time or memory on a file: it was terminated, and the file is refused. */
export class PdfTooComplexError extends Error {
  constructor(
    readonly limit: 'time' | 'memory',
    message: string,
  ) {
    super(message);
    this.name = 'PdfTooComplexError';
  }
}

export const LIMIT_REASONS = {
  expands: (budget: number, limits: DecodeLimits) =>
    `The PDF expands to more than ${formatBytes(budget)} when decompressed; at most ${limits.maxDecodeRatio} times its size (and never more than ${formatBytes(limits.maxDecodedBytes)}) is accepted. Save it again with a standard PDF tool.`,
  filterChain: (count: number, max: number) =>
    `The PDF has a stream compressed with ${count} filters in a row; at most ${max} are accepted.`,
  oddObjectStream: (filters: string) =>
    `The PDF compresses its object streams in an unusual way (${filters}); only /FlateDecode is accepted there. Save it again with a standard PDF tool.`,
  unusual: (what: string) =>
    `The PDF's structure is unusual (${what} where a reader decompresses it); save it again with a standard PDF tool.`,
  corruptStream:
    'The PDF is damaged: one of its compressed object streams cannot be decompressed. Save it again with a standard PDF tool.',
  tooManyObjects: (max: number) => `The PDF has more than ${max} objects; at most ${max} are accepted.`,
  tooManyObjectStreams: (max: number) =>
    `The PDF has more than ${max} object streams; at most ${max} are accepted.`,
  tooSlow: (timeoutMs: number) =>
    `The PDF is too complex to process: reading it took longer than ${timeoutMs / 1000} seconds. Simplify it or save it again with a standard PDF tool.`,
  tooLarge: (memoryMb: number) =>
    `The PDF is too complex to process: reading it needed more than ${memoryMb} MB of memory. Simplify it or save it again with a standard PDF tool.`,
} as const;
