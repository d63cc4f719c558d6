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
/**
 * Field (or part) name → messages. Names often come from the client (`constructor`, `__proto__` and `toString`
 * are valid multipart part names), so a details map never has a prototype: build one with `newDetails()` and
 * fill it with `addDetail`, which are safe for any name.
 */
export type ErrorDetails = Record<string, string[]>;

/** An empty details map with no prototype: no name a client sends can collide with an inherited property. */
export function newDetails(): ErrorDetails {
  return Object.create(null) as ErrorDetails;
}

/**
 * Appends messages under `field`. Safe for any name and any map: the entry is read only when it is the map's own
 * and written as an own data property, so `__proto__` is an ordinary key and nothing inherited is touched.
 */
export function addDetail(details: ErrorDetails, field: string, ...messages: string[]): void {
  const existing = Object.hasOwn(details, field) ? details[field] : undefined;
  if (Array.isArray(existing)) {
    existing.push(...messages);
    return;
  }
  Object.defineProperty(details, field, {
    value: [...messages],
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** Every entry of each map, merged into one new prototype-free map (messages of a repeated field appended). */
export function mergeDetails(...all: readonly ErrorDetails[]): ErrorDetails {
  const out = newDetails();
  for (const details of all)
    for (const [field, messages] of Object.entries(details)) addDetail(out, field, ...messages);
  return out;
}

export class AppError extends Error {
  readonly status: number;
  /** Always a prototype-free copy of what was given (see `ErrorDetails`). */
  readonly details: ErrorDetails;
  constructor(
    readonly code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
    this.details = mergeDetails(details);
  }

  static validation(details: ErrorDetails): AppError {
    return new AppError('validation_failed', 'Validation failed', details);
  }

  static notFound(what: string): AppError {
    return new AppError('not_found', `${what} not found`);
  }

  /** An action refused by a resource's current state (docs/product-rules.md §3). */
  static conflict(message: string): AppError {
    return new AppError('conflict', message);
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
