import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { DEFAULT_PDF_LIMITS } from '../../src/pdf/limits.ts';

describe('PDF limits in the configuration', () => {
  it('defaults to the limits the PDF module falls back on', () => {
    expect(loadConfig({}).pdf).toEqual(DEFAULT_PDF_LIMITS);
    expect(DEFAULT_PDF_LIMITS).toEqual({
      decode: {
        maxDecodedBytes: 128 * 1024 * 1024,
        maxDecodeRatio: 16,
        maxFilters: 2,
        maxObjects: 200_000,
        maxObjectStreams: 10_000,
      },
      inspection: { concurrency: 2, timeoutMs: 15_000, memoryMb: 256 },
      finalization: { concurrency: 2, timeoutMs: 120_000, memoryMb: 512 },
    });
  });

  it('reads every variable', () => {
    const pdf = loadConfig({
      PDF_MAX_DECODED_MB: '1.5',
      PDF_MAX_DECODE_RATIO: '8',
      PDF_MAX_FILTERS: '3',
      PDF_MAX_OBJECTS: '5000',
      PDF_MAX_OBJECT_STREAMS: '50',
      PDF_WORKER_TIMEOUT_MS: '2000',
      PDF_WORKER_MEMORY_MB: '64',
      PDF_MAX_CONCURRENT_INSPECTIONS: '1',
      PDF_FINALIZE_TIMEOUT_MS: '3000',
      PDF_FINALIZE_MEMORY_MB: '128',
      PDF_MAX_CONCURRENT_FINALIZATIONS: '4',
    }).pdf;
    expect(pdf).toEqual({
      decode: {
        maxDecodedBytes: 1.5 * 1024 * 1024,
        maxDecodeRatio: 8,
        maxFilters: 3,
        maxObjects: 5000,
        maxObjectStreams: 50,
      },
      inspection: { concurrency: 1, timeoutMs: 2000, memoryMb: 64 },
      finalization: { concurrency: 4, timeoutMs: 3000, memoryMb: 128 },
    });
  });

  it.each([
    [{ PDF_MAX_DECODE_RATIO: '0.5' }, 'PDF_MAX_DECODE_RATIO'],
    [{ PDF_MAX_CONCURRENT_INSPECTIONS: '0' }, 'PDF_MAX_CONCURRENT_INSPECTIONS'],
    [{ PDF_WORKER_MEMORY_MB: 'lots' }, 'PDF_WORKER_MEMORY_MB'],
    // A file accepted at upload must not fail finalization for want of the time or memory upload had.
    [{ PDF_WORKER_TIMEOUT_MS: '200000' }, 'PDF_FINALIZE_TIMEOUT_MS'],
    [{ PDF_FINALIZE_MEMORY_MB: '128' }, 'PDF_FINALIZE_MEMORY_MB'],
  ])('refuses %o, naming %s', (env, name) => {
    let caught: unknown;
    try {
      loadConfig(env);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).message).toContain(name);
  });
});
