import type { Knex } from '../db/knex.ts';
import { actionEvidenceStore } from '../db/stores/action-evidence-store.ts';
import { approversStore } from '../db/stores/approvers-store.ts';
import { whatsAppMessagesStore } from '../db/stores/whatsapp-messages-store.ts';
import type { Logger } from '../logger.ts';
import { parseButtonPayload, type ParsedNotification } from '../whatsapp/index.ts';
import { ApprovalRefused, type ApprovalClient } from './client.ts';

export interface InboundDeps {
  db: Knex;
  approvals: ApprovalClient;
  logger: Logger;
}

export interface InboundOutcome {
  wamid: string;
  result:
    'accepted' | 'replayed' | 'not_a_button' | 'unknown_token' | 'wrong_phone' | 'wrong_button' | 'refused';
  detail?: string;
}

/**
 * Applies one WhatsApp notification: delivery statuses become evidence on our messages, and button replies become
 * approver actions. A message id is handled once (replays are ignored), a reply from a number that is not the
 * approver's is ignored, and a transient failure forgets the id again so Meta's retry is handled.
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
    const fresh = await messages.recordInbound({
      wamid: reply.wamid,
      phone: reply.from,
      kind: 'button_reply',
      payload: { payload: reply.payload, source: reply.source, context: reply.contextWamid ?? null },
      accountId: approver?.accountId ?? null,
      documentId: approver?.documentId ?? null,
      approverId: approver?.id ?? null,
    });
    const outcome = (result: InboundOutcome['result'], detail?: string) =>
      outcomes.push({ wamid: reply.wamid, result, ...(detail ? { detail } : {}) });
    if (!fresh) {
      outcome('replayed');
      continue;
    }
    if (!button) {
      outcome('not_a_button');
      continue;
    }
    if (!approver) {
      outcome('unknown_token');
      continue;
    }
    if (approver.phone !== reply.from) {
      deps.logger.warn(
        { approverId: approver.id, from: reply.from },
        'WhatsApp reply from a number that is not the approver’s',
      );
      outcome('wrong_phone');
      continue;
    }
    const completes = { approve: 'approve_only', review: 'review_only', reject: undefined }[button.action];
    if (completes && completes !== approver.actionType) {
      // Signing and stamping happen on the approval page; a stray or forged button cannot complete them.
      outcome('wrong_button', `${button.action} for a ${approver.actionType} approver`);
      continue;
    }
    // The evidence is stored first and passed by id, as from the page (see actFromPage).
    const kind = button.action === 'reject' ? 'reject' : 'complete';
    let evidenceId: string | undefined;
    try {
      evidenceId = await actionEvidenceStore(deps.db).submit({
        documentId: approver.documentId,
        approverId: approver.id,
        kind,
        evidence: { at: reply.timestamp.toISOString(), channel: 'whatsapp', messageId: reply.wamid },
      });
      await deps.approvals.act(approver.documentId, { approverId: approver.id, kind, evidenceId });
      outcome('accepted');
    } catch (err) {
      if (err instanceof ApprovalRefused) {
        if (evidenceId) await actionEvidenceStore(deps.db).discard(evidenceId);
        outcome('refused', err.refusal);
        continue;
      }
      await messages.forgetInbound(reply.wamid);
      throw err;
    }
  }
  return outcomes;
}
