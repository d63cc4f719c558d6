/**
 * The errors a finalization refuses with, apart from the modules that throw them, so code that only recognises them
 * (the API's PDF thread pool, src/pdf/workers/pdf-workers.ts) loads no PDF library to do so.
 */

export class FinalizeError extends Error {
  constructor(
    readonly code: 'original_changed' | 'original_refused',
    message: string,
  ) {
    super(message);
    this.name = 'FinalizeError';
  }
}

export class FinalizeInputError extends Error {
  constructor(
    readonly code: 'invalid_placement' | 'missing_mark',
    message: string,
  ) {
    super(message);
    this.name = 'FinalizeInputError';
  }
}
