import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import { whatsAppMessagesStore } from '../../db/stores/whatsapp-messages-store.ts';
import type { Logger } from '../../logger.ts';
import {
  parseButtonPayload,
  type ButtonPayload,
  type InboundReply,
  type ParsedNotification,
} from '../../whatsapp/index.ts';
import { ApprovalRefused, type ApprovalClient } from './client.ts';
import { takeAction } from './take-action.ts';
import type { WriteNotices } from './write-notices.ts';
import type { RecordedEventsDispatch } from './act-in-database.ts';

export interface InboundDeps {
  db: Knex;
  approvals: ApprovalClient;
  /** Seals the reply's payload (a button's `approve:<token>`) in the inbound record. */
  secrets: SecretBox;
  logger: Logger;
  /** When actions are written, as PostgreSQL announces it (the API server's); without one the row is read. */
  writeNotices?: WriteNotices;
  /** Hands an action's committed events to webhook delivery. */
  webhooks?: RecordedEventsDispatch;
}

export interface InboundOutcome {
  wamid: string;
  result:
    'accepted' | 'replayed' | 'not_a_button' | 'unknown_token' | 'wrong_phone' | 'wrong_button' | 'refused';
  detail?: string;
}

/**
 * Whether the reply comes from the approver's WhatsApp account, and by what: the approver's phone (as `from`, or
 * as `wa_id`, which is the number), or a `wa_id` or business-scoped user id stored from an earlier matched reply of
 * the same number in the same account (this document's or an earlier one's). Ids are only ever stored from a reply
 * already matched, so a stranger holding a forwarded button cannot bind their account to the approver's number.
 */
async function identify(
  db: Knex,
  approver: { accountId: string; phone: string },
  reply: InboundReply,
): Promise<'phone' | 'stored_id' | undefined> {
  if (reply.from !== undefined && reply.from === approver.phone) return 'phone';
  if (reply.waId !== undefined && reply.waId === approver.phone) return 'phone';
  if (reply.waId === undefined && reply.userId === undefined) return undefined;
  const known = await approversStore(db).knowsWhatsAppIdentity(approver.accountId, approver.phone, {
    ...(reply.waId !== undefined && { waId: reply.waId }),
    ...(reply.userId !== undefined && { userId: reply.userId }),
  });
  return known ? 'stored_id' : undefined;
}

/**
 * Applies one WhatsApp notification: delivery statuses become evidence on our messages, and button replies become
 * approver actions. A message id is handled to the end once: a delivery of an id already handled is a replay and
 * ignored, while an id whose handling failed half-way (even with PostgreSQL gone, when nothing can be written) is
 * handled again on Meta's retry. A reply that is not from the approver's WhatsApp account (phone, `wa_id` or
 * business-scoped user id: see `identify`) is ignored.
 */
export async function handleWhatsAppNotification(
  deps: InboundDeps,
  n: ParsedNotification,
): Promise<InboundOutcome[]> {
  const messages = whatsAppMessagesStore(deps.db);
  for (const s of n.statuses) {
    await messages.recordStatus({
      wamid: s.wamid,
      status: s.status,
      timestamp: s.timestamp,
      ...(s.recipient ? { recipient: s.recipient } : {}),
      errors: s.errors,
    });
  }

  const outcomes: InboundOutcome[] = [];
  for (const reply of n.replies) {
    const button = parseButtonPayload(reply.payload);
    const approver = button ? await approversStore(deps.db).findByLinkToken(button.token) : undefined;
    const toHandle = await messages.recordInbound(
      {
        wamid: reply.wamid,
        // The column holds a number; a reply without one (a username user) keeps its ids in the payload.
        phone: reply.from ?? reply.waId ?? '',
        kind: 'button_reply',
        payload: {
          payload: reply.payload,
          source: reply.source,
          context: reply.contextWamid ?? null,
          ...(reply.waId !== undefined && { wa_id: reply.waId }),
          ...(reply.userId !== undefined && { user_id: reply.userId }),
        },
        accountId: approver?.accountId ?? null,
        documentId: approver?.documentId ?? null,
        approverId: approver?.id ?? null,
      },
      deps.secrets,
    );
    if (!toHandle) {
      outcomes.push({ wamid: reply.wamid, result: 'replayed' });
      continue;
    }
    // A failure before this line leaves the message unhandled, to be handled again when Meta delivers it again;
    // an action taken twice that way is refused the second time (the approver has acted).
    const { result, detail } = await applyReply(deps, reply, button, approver);
    await messages.markInboundHandled(reply.wamid);
    outcomes.push({ wamid: reply.wamid, result, ...(detail ? { detail } : {}) });
  }
  return outcomes;
}

async function applyReply(
  deps: InboundDeps,
  reply: InboundReply,
  button: ButtonPayload | undefined,
  approver: Approver | undefined,
): Promise<Omit<InboundOutcome, 'wamid'>> {
  if (!button) return { result: 'not_a_button' };
  if (!approver) return { result: 'unknown_token' };
  const matchedBy = await identify(deps.db, approver, reply);
  if (!matchedBy) {
    deps.logger.warn(
      { approverId: approver.id, from: reply.from ?? null },
      'WhatsApp reply from an account that is not the approver’s',
    );
    return { result: 'wrong_phone' };
  }
  // First seen: the ids Meta sent with a reply that is the approver's, for a later reply without the number. A
  // `wa_id` that is the approver's phone is not stored: `identify` matches it as the phone already, so storing it
  // would cost a write and recognise nothing more.
  await approversStore(deps.db).rememberWhatsAppIdentity(approver.id, {
    ...(reply.waId !== undefined && reply.waId !== approver.phone && { waId: reply.waId }),
    ...(reply.userId !== undefined && { userId: reply.userId }),
  });
  const completes = { approve: 'approve_only', review: 'review_only', reject: undefined }[button.action];
  if (completes && completes !== approver.actionType) {
    // Signing and stamping happen on the approval page; a stray or forged button cannot complete them.
    return { result: 'wrong_button', detail: `${button.action} for a ${approver.actionType} approver` };
  }
  // The evidence goes with the action, as from the page (see actFromPage); a refusal leaves none.
  const kind = button.action === 'reject' ? 'reject' : 'complete';
  try {
    await takeAction(deps, approver.documentId, {
      approverId: approver.id,
      kind,
      evidenceId: randomUUID(),
      evidence: { at: reply.timestamp.toISOString(), channel: 'whatsapp', messageId: reply.wamid },
    });
    return { result: 'accepted' };
  } catch (err) {
    if (!(err instanceof ApprovalRefused)) throw err;
    return { result: 'refused', detail: err.refusal };
  }
}
