import { sha256Hex } from '../auth/tokens.ts';
import type { SecretBox } from '../auth/secret-box.ts';

/**
 * Every column that holds a value sealed with the secret box (`auth/secret-box.ts`), and the context each value is
 * sealed under. The context names the table, the column and the row, so a sealed value copied into another row or
 * column does not open there. The stores seal and open through these contexts, and `secrets:reseal` walks this list
 * to seal everything again with the current key: a new sealed column is added here, or it is never resealed.
 */
export interface SealedColumn {
  table: string;
  column: string;
  /** The primary key: the reseal pages through the table by it. */
  key: string;
  keyType: 'uuid' | 'bigint';
  /** The columns `context` reads (the key among them when it needs it). */
  contextColumns: readonly string[];
  context(row: Record<string, unknown>): string;
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : '';

/** The read-back copy of an approver's link token (looked up by `link_token_sha256`). */
export const approverLinkContext = (approverId: string) => `approvers.link_token:${approverId}`;
/** The read-back copy of a signed file's token (looked up by `final_token_sha256`). */
export const finalTokenContext = (documentId: string) => `documents.final_token:${documentId}`;
/** The read-back copy of a verification page token (looked up by `token_sha256`). */
export const verificationTokenContext = (documentId: string) => `document_verifications.token:${documentId}`;
export const webhookSecretContext = (webhookId: string) => `webhooks.secret:${webhookId}`;
export const deliveryBodyContext = (deliveryId: number) => `webhook_deliveries.body:${deliveryId}`;
/** Bound to the dedupe key, which is unique and known before the insert (the id is not). */
export const eventBearerContext = (dedupeKey: string) => `document_events.bearer:${dedupeKey}`;
/**
 * An outbound message is keyed by its idempotency key, an inbound one by its message id (each unique in its
 * direction, and known before the upsert that writes the payload).
 */
export const messagePayloadContext = (m: {
  direction: string;
  idempotencyKey: string | null;
  wamid: string | null;
  id?: number;
}) =>
  m.direction === 'in'
    ? `whatsapp_messages.payload:in:${str(m.wamid)}`
    : m.idempotencyKey !== null
      ? `whatsapp_messages.payload:out:${m.idempotencyKey}`
      : `whatsapp_messages.payload:id:${str(m.id)}`;
export const idempotentResponseContext = (id: number) => `idempotency_keys.response:${id}`;
/** An account's TOTP secret (the dashboard's second factor), bound to the account. */
export const totpSecretContext = (accountId: string) => `account_totp.secret:${accountId}`;

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'approvers',
    column: 'link_token_sealed',
    key: 'id',
    keyType: 'uuid',
    contextColumns: ['id'],
    context: (r) => approverLinkContext(str(r.id)),
  },
  {
    table: 'documents',
    column: 'final_token_sealed',
    key: 'id',
    keyType: 'uuid',
    contextColumns: ['id'],
    context: (r) => finalTokenContext(str(r.id)),
  },
  {
    table: 'document_verifications',
    column: 'token_sealed',
    key: 'document_id',
    keyType: 'uuid',
    contextColumns: ['document_id'],
    context: (r) => verificationTokenContext(str(r.document_id)),
  },
  {
    table: 'webhooks',
    column: 'secret_sealed',
    key: 'id',
    keyType: 'uuid',
    contextColumns: ['id'],
    context: (r) => webhookSecretContext(str(r.id)),
  },
  {
    table: 'webhook_deliveries',
    column: 'body_sealed',
    key: 'id',
    keyType: 'bigint',
    contextColumns: ['id'],
    context: (r) => deliveryBodyContext(Number(r.id)),
  },
  {
    table: 'document_events',
    column: 'bearer_sealed',
    key: 'id',
    keyType: 'bigint',
    contextColumns: ['dedupe_key'],
    context: (r) => eventBearerContext(str(r.dedupe_key)),
  },
  {
    table: 'whatsapp_messages',
    column: 'payload_sealed',
    key: 'id',
    keyType: 'bigint',
    contextColumns: ['id', 'direction', 'idempotency_key', 'wamid'],
    context: (r) =>
      messagePayloadContext({
        direction: str(r.direction),
        idempotencyKey: (r.idempotency_key as string | null) ?? null,
        wamid: (r.wamid as string | null) ?? null,
        id: Number(r.id),
      }),
  },
  {
    table: 'account_totp',
    column: 'secret_sealed',
    key: 'account_id',
    keyType: 'uuid',
    contextColumns: ['account_id'],
    context: (r) => totpSecretContext(str(r.account_id)),
  },
  {
    table: 'idempotency_keys',
    column: 'response_sealed',
    key: 'id',
    keyType: 'bigint',
    contextColumns: ['id'],
    context: (r) => idempotentResponseContext(Number(r.id)),
  },
];

/**
 * A bearer token as it is kept: its SHA-256, which the lookup compares (a dump of the table names no usable
 * token), and a sealed copy for where the service must hand the same token out again.
 */
export interface StoredToken {
  sha256: string;
  sealed: string;
}

export function storedToken(secrets: SecretBox, token: string, context: string): StoredToken {
  return { sha256: sha256Hex(token), sealed: secrets.seal(token, context) };
}

/** JSON sealed as text (payloads, bodies); `openJson` reverses it. */
export const sealJson = (secrets: SecretBox, value: unknown, context: string): string =>
  secrets.seal(JSON.stringify(value ?? null), context);

export const openJson = (secrets: SecretBox, sealed: string, context: string): unknown =>
  JSON.parse(secrets.open(sealed, context)) as unknown;
