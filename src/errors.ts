/**
 * One error type for the whole service. Each error has a `type`, the stable machine name of its cause that clients
 * read as `error.type`; the type decides its `code` (the kind of failure) and the code the HTTP status, each from
 * one table. The error middleware turns every AppError into the documented envelope.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  not_implemented: 501,
  bad_gateway: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Every cause an error can have, and its kind. A cause that a client may want to tell apart from the others of its
 * status gets its own type (the 409s above all, which differ only in their message otherwise); a type is never
 * renamed or reused for another cause, since clients branch on it.
 */
export const ERROR_TYPES = {
  bad_request: 'bad_request',
  malformed_json: 'bad_request',
  malformed_multipart: 'bad_request',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
  request_timeout: 'request_timeout',
  // 409: the resource's state (or another request) refuses the action; the same request may succeed later or
  // elsewhere.
  not_a_draft: 'conflict',
  already_sent: 'conflict',
  document_expired: 'conflict',
  send_in_progress: 'conflict',
  document_closed: 'conflict',
  document_finalizing: 'conflict',
  not_approved: 'conflict',
  too_many_approvers: 'conflict',
  approver_order_full: 'conflict',
  link_not_issued: 'conflict',
  approver_not_notified: 'conflict',
  approver_already_acted: 'conflict',
  approver_not_notifiable: 'conflict',
  reminder_limit_reached: 'conflict',
  action_refused: 'conflict',
  delegation_not_allowed: 'conflict',
  delegation_pending: 'conflict',
  verification_not_needed: 'conflict',
  no_code_requested: 'conflict',
  idempotency_key_in_flight: 'conflict',
  delivery_pending: 'conflict',
  webhook_disabled: 'conflict',
  nothing_to_retry: 'conflict',
  ambiguous_reference: 'conflict',
  key_already_revoked: 'conflict',
  template_archived: 'conflict',
  bulk_send_closed: 'conflict',
  gone: 'gone',
  payload_too_large: 'payload_too_large',
  range_not_satisfiable: 'range_not_satisfiable',
  unsupported_media_type: 'unsupported_media_type',
  validation_failed: 'validation_failed',
  idempotency_key_reused: 'validation_failed',
  rate_limited: 'rate_limited',
  reminder_too_soon: 'rate_limited',
  code_locked: 'rate_limited',
  headers_too_large: 'headers_too_large',
  internal_error: 'internal',
  not_implemented: 'not_implemented',
  bad_gateway: 'bad_gateway',
  service_unavailable: 'unavailable',
} as const satisfies Record<string, ErrorCode>;

export type ErrorType = keyof typeof ERROR_TYPES;

/** The types in a stable order, for the OpenAPI enum. */
export const ERROR_TYPE_NAMES = Object.keys(ERROR_TYPES) as [ErrorType, ...ErrorType[]];
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

/** The types whose kind is a 409: each names the state that refused the action. */
export type ConflictType = {
  [T in ErrorType]: (typeof ERROR_TYPES)[T] extends 'conflict' ? T : never;
}[ErrorType];

export class AppError extends Error {
  /** The kind of failure, which fixes the status; `type` says which cause of that kind. */
  readonly code: ErrorCode;
  readonly status: number;
  /** Always a prototype-free copy of what was given (see `ErrorDetails`). */
  readonly details: ErrorDetails;
  constructor(
    readonly type: ErrorType,
    message: string,
    details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = ERROR_TYPES[type];
    this.status = ERROR_STATUS[this.code];
    this.details = mergeDetails(details);
  }

  static validation(details: ErrorDetails): AppError {
    return new AppError('validation_failed', 'Validation failed', details);
  }

  static notFound(what: string): AppError {
    return new AppError('not_found', `${what} not found`);
  }

  /** An action refused by a resource's current state (docs/product-rules.md §3), `type` naming that state. */
  static conflict(type: ConflictType, message: string): AppError {
    return new AppError(type, message);
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** The documented error envelope of an error: the numeric status as `code`, the cause as `type`. */
export function errorEnvelope(err: AppError): {
  success: false;
  error: { code: number; type: ErrorType; message: string; details: ErrorDetails };
} {
  return {
    success: false,
    error: { code: err.status, type: err.type, message: err.message, details: err.details },
  };
}
