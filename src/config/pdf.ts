import { z } from 'zod';
import { intIn } from './fields.ts';
import { PDF_LIMIT_DEFAULTS, type PdfLimits } from './pdf-limits.ts';
import { defineSlice } from './slice.ts';

export interface PdfConfig {
  pdf: PdfLimits;
}

const D = PDF_LIMIT_DEFAULTS;

export const pdfSlice = defineSlice({
  title: 'Untrusted PDFs',
  about:
    'A pre-scan bounds what decoding may cost before anything is decoded; the file is then read in worker threads, each terminated past its time or heap limit (the upload is refused as too complex: 422).',
  env: {
    PDF_MAX_DECODED_MB: z.coerce
      .number()
      .positive()
      .max(1_048_576)
      .default(D.maxDecodedMb)
      .describe('object and cross-reference streams may expand to this much in total...'),
    PDF_MAX_DECODE_RATIO: z.coerce
      .number()
      .min(1)
      .max(1e9)
      .default(D.maxDecodeRatio)
      .describe("...and to at most this many times the file's size"),
    PDF_MAX_FILTERS: intIn(1, 16).default(D.maxFilters).describe("filters in one stream's /Filter chain"),
    PDF_MAX_OBJECTS: intIn(100, 10_000_000)
      .default(D.maxObjects)
      .describe("indirect objects, object streams' contents included"),
    PDF_MAX_OBJECT_STREAMS: intIn(1, 1_000_000).default(D.maxObjectStreams).describe('object streams'),
    PDF_WORKER_TIMEOUT_MS: intIn(1, 600_000)
      .default(D.workerTimeoutMs)
      .describe('upload: the wall-clock limit of one inspection, from its start in a thread'),
    PDF_WORKER_MEMORY_MB: intIn(16, 16_384)
      .default(D.workerMemoryMb)
      .describe('upload: the V8 heap of one inspection thread'),
    PDF_MAX_CONCURRENT_INSPECTIONS: intIn(1, 256)
      .default(D.maxConcurrentInspections)
      .describe('upload: inspections at once per API process; past it POST/PUT answer 503 + Retry-After'),
    PDF_FINALIZE_TIMEOUT_MS: intIn(1, 600_000)
      .default(D.finalizeTimeoutMs)
      .describe('finalization: the limit of reading and composing one document (>= PDF_WORKER_TIMEOUT_MS)'),
    PDF_FINALIZE_MEMORY_MB: intIn(16, 16_384)
      .default(D.finalizeMemoryMb)
      .describe('finalization: the V8 heap of one thread (>= PDF_WORKER_MEMORY_MB)'),
    PDF_MAX_CONCURRENT_FINALIZATIONS: intIn(1, 256)
      .default(D.maxConcurrentFinalizations)
      .describe('finalization: threads per worker process; more finalizations wait their turn'),
  },
  checks: {
    // A file accepted at upload must not fail finalization for want of time or memory the upload had.
    'pdf-limits': (e) => {
      const issues: string[] = [];
      if (e.PDF_FINALIZE_TIMEOUT_MS < e.PDF_WORKER_TIMEOUT_MS) {
        issues.push(
          'PDF_FINALIZE_TIMEOUT_MS: must be at least PDF_WORKER_TIMEOUT_MS (finalization reads what upload read)',
        );
      }
      if (e.PDF_FINALIZE_MEMORY_MB < e.PDF_WORKER_MEMORY_MB) {
        issues.push(
          'PDF_FINALIZE_MEMORY_MB: must be at least PDF_WORKER_MEMORY_MB (finalization reads what upload read)',
        );
      }
      return issues;
    },
  },
  build: (e): PdfConfig => ({
    pdf: {
      decode: {
        maxDecodedBytes: Math.floor(e.PDF_MAX_DECODED_MB * 1024 * 1024),
        maxDecodeRatio: e.PDF_MAX_DECODE_RATIO,
        maxFilters: e.PDF_MAX_FILTERS,
        maxObjects: e.PDF_MAX_OBJECTS,
        maxObjectStreams: e.PDF_MAX_OBJECT_STREAMS,
      },
      inspection: {
        concurrency: e.PDF_MAX_CONCURRENT_INSPECTIONS,
        timeoutMs: e.PDF_WORKER_TIMEOUT_MS,
        memoryMb: e.PDF_WORKER_MEMORY_MB,
      },
      finalization: {
        concurrency: e.PDF_MAX_CONCURRENT_FINALIZATIONS,
        timeoutMs: e.PDF_FINALIZE_TIMEOUT_MS,
        memoryMb: e.PDF_FINALIZE_MEMORY_MB,
      },
    },
  }),
});
