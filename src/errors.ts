/**
 * One error type for the whole service. `code` is a stable machine name; the HTTP status comes from one table,
 * and the error middleware turns every AppError into the documented envelope.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  internal: 500,
  not_implemented: 501,
  bad_gateway: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorDetails = Record<string, string[]>;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }

  static validation(details: ErrorDetails): AppError {
    return new AppError('validation_failed', 'Validation failed', details);
  }

  static notFound(what: string): AppError {
    return new AppError('not_found', `${what} not found`);
  }

  /** An action refused by a resource's current state (decisions §3). */
  static conflict(message: string): AppError {
    return new AppError('conflict', message);
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
