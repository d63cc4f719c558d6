import type { WhatsAppMessagesStore } from '../db/stores/whatsapp-messages-store.ts';
import { buildTemplateMessage, renderPreview } from './templates.ts';
import {
  isWhatsAppSendError,
  WhatsAppSendError,
  type ApprovalNotice,
  type WhatsAppProvider,
  type WhatsAppTemplateConfig,
} from './types.ts';

export interface SendNoticeDeps {
  provider: WhatsAppProvider;
  messages: WhatsAppMessagesStore;
  templates: WhatsAppTemplateConfig;
}

export interface SendNoticeResult {
  wamid: string;
  /** True when an earlier attempt with the same idempotency key had already sent it. */
  deduplicated: boolean;
}

/**
 * Sends one notice at most once per idempotency key and records it in `whatsapp_messages` (the outbox, and the
 * row that delivery statuses attach to). A refusal is recorded before it is rethrown, so the evidence exists
 * whether or not the caller retries: `pending` for a retryable WhatsAppSendError, `failed` otherwise.
 *
 * The Cloud API has no idempotency key of its own: if the process dies after Meta accepted the message and
 * before the record is written, a retry sends it again. That window is a few milliseconds wide.
 */
export async function sendNotice(deps: SendNoticeDeps, notice: ApprovalNotice): Promise<SendNoticeResult> {
  const earlier = await deps.messages.findByIdempotencyKey(notice.idempotencyKey);
  if (earlier?.wamid) return { wamid: earlier.wamid, deduplicated: true };

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
    await deps.messages.recordSendFailure({ ...record, error: { ...failure.toJSON() } });
    throw failure;
  }
  const saved = await deps.messages.recordOutbound({ ...record, wamid });
  return { wamid: saved.wamid ?? wamid, deduplicated: saved.wamid !== null && saved.wamid !== wamid };
}
