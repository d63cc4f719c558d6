import type { SecretBox } from '../../auth/secret-box.ts';
import { allColumns } from '../prepared.ts';
import { messagePayloadContext } from '../sealed-columns.ts';

/** What the WhatsApp messages store reads and writes: the messages and statuses as rows and as the app sees them. */

export const OUTBOUND_STATUSES = [
  'sending',
  'pending',
  'accepted',
  'sent',
  'delivered',
  'read',
  'failed',
] as const;
export type OutboundStatus = (typeof OUTBOUND_STATUSES)[number];
export type ReportedStatus = Extract<OutboundStatus, 'sent' | 'delivered' | 'read' | 'failed'>;

/** What `status_error` holds: a refused send, or the first error of a `failed` status. */
export interface DeliveryError {
  message: string;
  code?: number;
  details?: string;
  retryable?: boolean;
  [extra: string]: unknown;
}

export interface WhatsAppMessage {
  id: number;
  wamid: string | null;
  direction: 'in' | 'out';
  accountId: string | null;
  documentId: string | null;
  approverId: string | null;
  phone: string;
  kind: string;
  /** `openPayload` reads it. */
  payloadSealed: string;
  status: OutboundStatus | null;
  statusAt: Date | null;
  statusError: DeliveryError | null;
  idempotencyKey: string | null;
  createdAt: Date;
}

/** The message's payload, opened. */
export function openPayload(message: WhatsAppMessage, secrets: SecretBox): unknown {
  return JSON.parse(secrets.open(message.payloadSealed, messagePayloadContext(message))) as unknown;
}

export interface StatusUpdate {
  wamid: string;
  status: ReportedStatus;
  timestamp: Date;
  recipient?: string;
  errors: { code?: number; title?: string; message?: string; details?: string }[];
}

export interface StatusEvent {
  wamid: string;
  status: ReportedStatus;
  statusAt: Date;
  recipient: string | null;
  errors: StatusUpdate['errors'] | null;
  receivedAt: Date;
}

export interface ApproverDeliveryStatus {
  approverId: string;
  messageId: number;
  wamid: string | null;
  kind: string;
  status: OutboundStatus | null;
  statusAt: Date | null;
  statusError: DeliveryError | null;
  sentAt: Date;
}

/** A reminder WhatsApp accepted: when it was first attempted, and whether the sender or the schedule sent it. */
export interface SentReminder {
  at: Date;
  kind: 'manual' | 'automatic' | 'expires_tomorrow';
}

export interface ReminderHistory {
  count: number;
  lastAt: Date | null;
  /** The database's time of the read. */
  now: Date;
}

/** An outbound message as the outbox records it, before and after the provider answers. */
export interface OutboundInput {
  idempotencyKey: string;
  accountId?: string | null;
  documentId?: string | null;
  approverId?: string | null;
  phone: string;
  kind: string;
  payload: unknown;
}

export interface MessageRow {
  id: number;
  wamid: string | null;
  direction: 'in' | 'out';
  account_id: string | null;
  document_id: string | null;
  approver_id: string | null;
  phone: string;
  kind: string;
  payload_sealed: string;
  status: OutboundStatus | null;
  status_at: Date | null;
  status_error: DeliveryError | null;
  idempotency_key: string | null;
  created_at: Date;
}

/** Every column `MessageRow` holds: named statements return these, never `*`. */
export const MESSAGE_COLUMNS = allColumns<MessageRow>()([
  'id',
  'wamid',
  'direction',
  'account_id',
  'document_id',
  'approver_id',
  'phone',
  'kind',
  'payload_sealed',
  'status',
  'status_at',
  'status_error',
  'idempotency_key',
  'created_at',
]);

export interface StatusRow {
  wamid: string;
  status: ReportedStatus;
  status_at: Date;
  recipient: string | null;
  errors: StatusUpdate['errors'] | null;
  received_at: Date;
}

export const toMessage = (r: MessageRow): WhatsAppMessage => ({
  id: r.id,
  wamid: r.wamid,
  direction: r.direction,
  accountId: r.account_id,
  documentId: r.document_id,
  approverId: r.approver_id,
  phone: r.phone,
  kind: r.kind,
  payloadSealed: r.payload_sealed,
  status: r.status,
  statusAt: r.status_at,
  statusError: r.status_error,
  idempotencyKey: r.idempotency_key,
  createdAt: r.created_at,
});

export const toStatusEvent = (r: StatusRow): StatusEvent => ({
  wamid: r.wamid,
  status: r.status,
  statusAt: r.status_at,
  recipient: r.recipient,
  errors: r.errors,
  receivedAt: r.received_at,
});
