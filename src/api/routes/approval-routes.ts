import Router from '@koa/router';
import { z } from 'zod';
import { ApprovalRefused, createApprovalClient } from '../../approvals/approval-client.ts';
import { approversStore } from '../../db/stores/approvers-store.ts';
import { documentsStore, type Document } from '../../db/stores/documents-store.ts';
import { whatsAppMessagesStore } from '../../db/stores/whatsapp-messages-store.ts';
import { LIMITS } from '../../documents/model.ts';
import { serializeApprover, serializeDocument } from '../../documents/serialize.ts';
import { AppError } from '../../errors.ts';
import { requireScope } from '../middleware/authenticate.ts';
import { authOf, type AppContext, type AppState } from '../context.ts';
import type { ApiDeps } from '../deps.ts';
import { isoTime, ok } from '../respond.ts';

const uuid = z.uuid();

async function loadDocument(
  deps: Pick<ApiDeps, 'db'>,
  ctx: AppContext,
  id: string | undefined,
): Promise<Document> {
  const parsed = uuid.safeParse(id);
  const doc = parsed.success
    ? await documentsStore(deps.db).findById(authOf(ctx).accountId, parsed.data)
    : undefined;
  if (!doc) throw AppError.notFound('Document');
  return doc;
}

const closedMessage = (doc: Document, action: string) => `Document is ${doc.status}; ${action}`;

/**
 * Sending, voiding, reminding and the approval status (decisions §3–§4). Every change goes through the approval
 * workflow; the answer is read from PostgreSQL after the workflow's update has written it.
 */
export function createApprovalRouter(deps: Pick<ApiDeps, 'db' | 'temporal' | 'config'>): Router<AppState> {
  const router = new Router<AppState>();
  const approvals = createApprovalClient({
    client: deps.temporal.client,
    taskQueue: deps.config.temporal.taskQueue,
  });
  const documentView = async (doc: Document) =>
    serializeDocument(
      (await documentsStore(deps.db).findByIdUnscoped(doc.id)) ?? doc,
      await approversStore(deps.db).listByDocument(doc.id),
    );

  router.post('/documents/:id/send', requireScope('documents:write'), async (ctx) => {
    const doc = await loadDocument(deps, ctx, ctx.params.id);
    if (doc.status !== 'draft') throw AppError.conflict(closedMessage(doc, 'only a draft can be sent'));
    const approvers = await approversStore(deps.db).listByDocument(doc.id);
    if (approvers.length === 0) {
      throw AppError.validation({
        approvers: ['A document needs at least one approver before it can be sent'],
      });
    }
    if (approvers.length > LIMITS.approversMax) {
      throw AppError.validation({
        approvers: [`A document can have at most ${LIMITS.approversMax} approvers`],
      });
    }
    if (doc.expiresAt.getTime() <= Date.now()) {
      throw AppError.conflict(
        `Document expired at ${isoTime(doc.expiresAt)} before it was sent; renew it with PUT /documents/${doc.id} and expires_in_days`,
      );
    }
    try {
      await approvals.send(doc, approvers);
    } catch (err) {
      if (err instanceof ApprovalRefused) throw AppError.conflict('Document has already been sent');
      throw err;
    }
    ok(ctx, await documentView(doc));
  });

  router.post('/documents/:id/void', requireScope('documents:write'), async (ctx) => {
    const doc = await loadDocument(deps, ctx, ctx.params.id);
    if (doc.status !== 'pending' && doc.status !== 'in_progress') {
      throw AppError.conflict(closedMessage(doc, 'only a pending or in-progress document can be voided'));
    }
    try {
      await approvals.void(doc.id);
    } catch (err) {
      if (!(err instanceof ApprovalRefused)) throw err;
      const now = (await documentsStore(deps.db).findByIdUnscoped(doc.id)) ?? doc;
      throw AppError.conflict(
        now.status === 'in_progress'
          ? 'Every approver has acted; the document is being finalized and can no longer be voided'
          : closedMessage(now, 'only a pending or in-progress document can be voided'),
      );
    }
    ok(ctx, await documentView(doc));
  });

  router.get('/documents/:id/status', requireScope('documents:read'), async (ctx) => {
    const doc = await loadDocument(deps, ctx, ctx.params.id);
    const approvers = await approversStore(deps.db).listByDocument(doc.id);
    const deliveries = await whatsAppMessagesStore(deps.db).latestStatusForApprovers(
      approvers.map((a) => a.id),
      { kinds: ['approval_request', 'reminder'] },
    );
    const open = doc.status === 'pending' || doc.status === 'in_progress';
    const waiting = approvers.filter((a) => a.status === 'waiting' || a.status === 'notified');
    const current = !open ? [] : doc.workflowType === 'sequential' ? waiting.slice(0, 1) : waiting;
    ok(ctx, {
      id: doc.id,
      reference: doc.reference,
      status: doc.status,
      workflow_type: doc.workflowType,
      expires_at: isoTime(doc.expiresAt),
      sent_at: isoTime(doc.sentAt),
      completed_at: isoTime(doc.completedAt),
      progress: {
        completed: approvers.filter((a) => a.status === 'completed').length,
        total: approvers.length,
      },
      current_approver_ids: current.map((a) => a.id),
      approvers: approvers.map((a) => {
        const delivery = deliveries.get(a.id);
        return {
          ...serializeApprover(a),
          notification: delivery
            ? {
                status: delivery.status ?? a.notificationStatus,
                error:
                  delivery.statusError ?? (a.notificationError ? { message: a.notificationError } : null),
                sent_at: isoTime(delivery.sentAt),
                updated_at: isoTime(delivery.statusAt),
              }
            : a.notificationStatus
              ? {
                  status: a.notificationStatus,
                  error: a.notificationError ? { message: a.notificationError } : null,
                  sent_at: null,
                  updated_at: null,
                }
              : null,
        };
      }),
    });
  });

  router.post('/approvers/:id/remind', requireScope('documents:write'), async (ctx) => {
    const parsed = uuid.safeParse(ctx.params.id);
    const approver = parsed.success
      ? await approversStore(deps.db).findById(authOf(ctx).accountId, parsed.data)
      : undefined;
    if (!approver) throw AppError.notFound('Approver');
    const doc = (await documentsStore(deps.db).findByIdUnscoped(approver.documentId))!;
    if (doc.status !== 'pending' && doc.status !== 'in_progress') {
      throw AppError.conflict(
        closedMessage(doc, 'reminders go only to approvers of a pending or in-progress document'),
      );
    }
    if (approver.status !== 'notified') {
      throw AppError.conflict(
        approver.status === 'waiting'
          ? 'This approver has not been notified yet (it is not their turn); nothing to remind'
          : `This approver has already acted (${approver.status}); nothing to remind`,
      );
    }
    let wamid: string | null;
    try {
      ({ wamid } = await approvals.remind(doc.id, approver.id));
    } catch (err) {
      if (err instanceof ApprovalRefused) throw AppError.conflict(`Cannot remind: ${err.message}`);
      throw err;
    }
    ok(ctx, { approver_id: approver.id, reminded_at: isoTime(new Date()), whatsapp_message_id: wamid });
  });

  return router;
}
