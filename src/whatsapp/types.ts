import type { ActionType, Language, NoticeKind } from '../domain/model.ts';

// The configuration's shapes of WhatsApp (templates, the outbox's retries), owned by its slice.
export type {
  RecordRetry,
  TemplateVariants,
  WhatsAppConfig,
  WhatsAppTemplateConfig,
} from '../config/whatsapp.ts';

/** The WhatsApp layer's vocabulary: what the workflow asks to send, and how a send can fail. */

/**
 * One message to one approver. `approval_request` and `reminder` carry the approver's link token (the URL
 * button's suffix and the quick-reply payloads); `voided` and `rejected` are informational and do not use it.
 */
export interface ApprovalNotice {
  kind: NoticeKind;
  accountId: string;
  documentId: string;
  /** Null for a `signed_copy` to one of the document's `cc` recipients, who is no approver. */
  approverId: string | null;
  /** E.164 digits without the plus, as stored on the approver. */
  phone: string;
  language: Language;
  /** The approver's name in `language`. */
  approverName: string;
  /** The document title in `language`. */
  documentTitle: string;
  /** `WQT-2026-000042`. */
  reference: string;
  linkToken: string;
  actionType: ActionType;
  /**
   * Same key, same message: a retried activity finds the earlier send and does not send twice. Make it from what
   * identifies the notification (`<approverId>:approval_request:1`), never from the time or a random value.
   */
  idempotencyKey: string;
  /**
   * `signed_copy` only: the signed PDF, sent as the template's document header by link (Meta fetches the file from
   * this permanent public HTTPS URL) under this file name.
   */
  document?: NoticeDocument;
}

export interface NoticeDocument {
  link: string;
  filename: string;
}

export interface WhatsAppProvider {
  readonly name: 'cloud' | 'console';
  /** Throws WhatsAppSendError; `retryable` says whether trying again later can succeed. */
  send(notice: ApprovalNotice): Promise<{ wamid: string }>;
}

export type SendFailureReason = 'graph_error' | 'http_error' | 'network' | 'timeout' | 'invalid_response';

export interface WhatsAppSendErrorInit {
  retryable: boolean;
  reason: SendFailureReason;
  httpStatus?: number;
  /** Graph `error.code`, e.g. 131026. */
  code?: number;
  /** Graph `error.error_subcode` (deprecated by Meta, still sent by some versions). */
  subcode?: number;
  type?: string;
  details?: string;
  fbtraceId?: string;
  retryAfterMs?: number;
  cause?: unknown;
}

export class WhatsAppSendError extends Error {
  readonly retryable: boolean;
  readonly reason: SendFailureReason;
  readonly httpStatus?: number;
  readonly code?: number;
  readonly subcode?: number;
  readonly type?: string;
  readonly details?: string;
  readonly fbtraceId?: string;
  readonly retryAfterMs?: number;

  constructor(message: string, init: WhatsAppSendErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'WhatsAppSendError';
    this.retryable = init.retryable;
    this.reason = init.reason;
    this.httpStatus = init.httpStatus;
    this.code = init.code;
    this.subcode = init.subcode;
    this.type = init.type;
    this.details = init.details;
    this.fbtraceId = init.fbtraceId;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** What is persisted as the message's `status_error` and shown as evidence. */
  toJSON(): SendErrorRecord {
    return {
      message: this.message,
      retryable: this.retryable,
      reason: this.reason,
      ...(this.httpStatus !== undefined && { http_status: this.httpStatus }),
      ...(this.code !== undefined && { code: this.code }),
      ...(this.subcode !== undefined && { subcode: this.subcode }),
      ...(this.details !== undefined && { details: this.details }),
      ...(this.fbtraceId !== undefined && { fbtrace_id: this.fbtraceId }),
    };
  }
}

export interface SendErrorRecord {
  message: string;
  retryable: boolean;
  reason: SendFailureReason;
  http_status?: number;
  code?: number;
  subcode?: number;
  details?: string;
  fbtrace_id?: string;
}

export function isWhatsAppSendError(err: unknown): err is WhatsAppSendError {
  return err instanceof WhatsAppSendError;
}
