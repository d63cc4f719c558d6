import type { SecretBox } from '../auth/secret-box.ts';
import type { OutboundInput, WhatsAppMessagesStore } from '../db/stores/whatsapp-messages-store.ts';
import { DEFAULT_RECORD_RETRY, withRetries } from './record-retry.ts';
import { buildTemplateMessage, renderPreview } from './templates.ts';
import {
  isWhatsAppSendError,
  WhatsAppSendError,
  type ApprovalNotice,
  type RecordRetry,
  type WhatsAppProvider,
  type WhatsAppTemplateConfig,
} from './types.ts';

/**
 * Somewhere outside the database to keep the provider's answer for one notice, that the next attempt of the same
 * send can read even when the database write failed: the Temporal activity's heartbeat details
 * (src/features/approval/heartbeat-memory.ts).
 */
export interface ProviderAnswerMemory {
  /** The message id an earlier attempt got from the provider and kept, if any. */
  recall(): string | undefined;
  /** Keeps the message id the provider just answered, before it is recorded. */
  keep(wamid: string): void;
}

/** The one logger call sendNotice makes (a pino Logger fits). */
export interface NoticeLogger {
  warn(obj: object, msg: string): void;
}

export interface SendNoticeDeps {
  provider: WhatsAppProvider;
  messages: WhatsAppMessagesStore;
  /** Seals the outbox row's payload (its buttons carry the link token). */
  secrets: SecretBox;
  templates: WhatsAppTemplateConfig;
  /** Where the provider's answer is kept across attempts; without it, only the database remembers. */
  memory?: ProviderAnswerMemory | undefined;
  /** How often recording the answer is tried before the attempt fails; DEFAULT_RECORD_RETRY when absent. */
  recordRetry?: RecordRetry | undefined;
  logger?: NoticeLogger | undefined;
}

export interface SendNoticeResult {
  wamid: string;
  /** True when an earlier attempt with the same idempotency key had already sent it. */
  deduplicated: boolean;
}

/**
 * Sends one notice at most once per idempotency key, through an outbox row in `whatsapp_messages` (also the row
 * that delivery statuses attach to):
 *
 * 1. A row that already holds the provider's message id was sent: it is returned, nothing is sent.
 * 2. An answer kept in `memory` by an earlier attempt (which sent, then failed to record) is recorded, nothing sent.
 * 3. Otherwise the row is written with status `sending` and committed, and only then is the provider called.
 * 4. The provider's id is kept in `memory`, then recorded (`accepted`), retried in-process on `recordRetry`. If
 *    every try fails the attempt fails, and the next attempt finds the id in step 2.
 *
 * A refusal is recorded before it is rethrown: `pending` for a retryable WhatsAppSendError, `failed` otherwise.
 *
 * The one duplicate left: an attempt that stops inside the provider call (the process dies, or the call times out
 * after Meta accepted) leaves a `sending` row and no answer anywhere; the next attempt cannot tell whether the
 * message went, and sends it again (logged as a warning). The Cloud API has no idempotency key of its own.
 */
export async function sendNotice(deps: SendNoticeDeps, notice: ApprovalNotice): Promise<SendNoticeResult> {
  const record = {
    idempotencyKey: notice.idempotencyKey,
    accountId: notice.accountId,
    documentId: notice.documentId,
    approverId: notice.approverId,
    phone: notice.phone,
    kind: notice.kind,
    payload: {
      provider: deps.provider.name,
      request: buildTemplateMessage(notice, deps.templates),
      preview: renderPreview(notice),
      link_token: notice.linkToken,
      action_type: notice.actionType,
    },
  };
  // Claimed before anything else: one statement finds a row that was sent (nothing to do) or writes `sending`.
  const claim = await deps.messages.claimOutbound(record, deps.secrets);
  if (!claim.claimed) return { wamid: claim.message.wamid!, deduplicated: true };

  const remembered = deps.memory?.recall();
  if (remembered) {
    // Sent by an earlier attempt that could not record the answer: record it now, send nothing. Kept again in
    // this attempt's heartbeat should its record fail too (the server also keeps the earlier details; measured).
    deps.memory?.keep(remembered);
    const { wamid } = await recordAnswer(deps, record, remembered);
    return { wamid, deduplicated: true };
  }

  if (claim.earlierStatus === 'sending') {
    deps.logger?.warn(
      { idempotencyKey: notice.idempotencyKey, messageId: claim.message.id, approverId: notice.approverId },
      'WhatsApp message sent again: an earlier attempt stopped inside the provider call, its outcome is unknown',
    );
  }

  let wamid: string;
  try {
    ({ wamid } = await deps.provider.send(notice));
  } catch (err) {
    const failure = isWhatsAppSendError(err)
      ? err
      : new WhatsAppSendError(err instanceof Error ? err.message : String(err), {
          retryable: true,
          reason: 'network',
          cause: err,
        });
    await withRetries(
      () => deps.messages.recordSendFailure({ ...record, error: { ...failure.toJSON() } }, deps.secrets),
      deps.recordRetry ?? DEFAULT_RECORD_RETRY,
    );
    throw failure;
  }
  deps.memory?.keep(wamid);
  return recordAnswer(deps, record, wamid);
}

/** Records the provider's answer on the message's row, retrying in-process; warns when the id is not unique. */
async function recordAnswer(
  deps: SendNoticeDeps,
  record: OutboundInput,
  wamid: string,
): Promise<SendNoticeResult> {
  const saved = await withRetries(
    () => deps.messages.recordOutbound({ ...record, wamid }, deps.secrets),
    deps.recordRetry ?? DEFAULT_RECORD_RETRY,
    (err, attempt, delayMs) =>
      deps.logger?.warn(
        { err, idempotencyKey: record.idempotencyKey, wamid, attempt, delayMs },
        'Recording a sent WhatsApp message failed; trying again',
      ),
  );
  if (saved.wamid === wamid && saved.sharedWith.length > 0) {
    deps.logger?.warn(
      { wamid, idempotencyKey: record.idempotencyKey, sharedWith: saved.sharedWith },
      'WhatsApp returned a message id it had already given another message; both are recorded',
    );
  }
  return { wamid: saved.wamid ?? wamid, deduplicated: saved.wamid !== null && saved.wamid !== wamid };
}
