import Router from '@koa/router';
import { z } from 'zod';
import { ApprovalRefused, type ApprovalClient } from '../../approvals/approval-client.ts';
import { remindWithinLimits } from '../../approvals/reminder-limits.ts';
import { approversStore } from '../../db/stores/approvers-store.ts';
import { documentsStore, type Document } from '../../db/stores/documents-store.ts';
import { whatsAppMessagesStore } from '../../db/stores/whatsapp-messages-store.ts';
import { LIMITS } from '../../documents/model.ts';
import { serializeApprover, serializeDocument } from '../../documents/serialize.ts';
import { AppError } from '../../errors.ts';
import { authOf, type AppContext, type AppState } from '../context.ts';
import type { ApiDeps } from '../deps.ts';
import { IdParams, pathId } from '../documents/route-helpers.ts';
import type { OpenApiRegistry } from '../openapi/registry.ts';
import { route } from '../openapi/route.ts';
import { isoTime, ok } from '../respond.ts';
import { ApproverResource } from '../schemas/approvers.ts';
import { DocumentResource } from '../schemas/documents.ts';
import { envelope, Timestamp } from '../schemas/envelopes.ts';

const Notification = z
  .object({
    status: z
      .string()
      .nullable()
      .meta({ description: 'accepted, sent, delivered, read or failed (WhatsApp)' }),
    error: z.unknown().nullable(),
    sent_at: Timestamp.nullable(),
    updated_at: Timestamp.nullable(),
  })
  .nullable();

const ApprovalStatus = z
  .object({
    id: z.uuid(),
    reference: z.string(),
    status: z.string(),
    workflow_type: z.enum(['sequential', 'parallel']),
    expires_at: Timestamp,
    sent_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
    progress: z.object({ completed: z.number().int(), total: z.number().int() }),
    current_approver_ids: z.array(z.uuid()).meta({ description: 'Whose action the document waits for now' }),
    approvers: z.array(ApproverResource.extend({ notification: Notification })),
  })
  .meta({ id: 'ApprovalStatus' });

const Reminder = z
  .object({ approver_id: z.uuid(), reminded_at: Timestamp, whatsapp_message_id: z.string().nullable() })
  .meta({ id: 'Reminder' });

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
export function createApprovalRouter(
  deps: Pick<ApiDeps, 'db' | 'config'> & { approvals: ApprovalClient },
  openapi: OpenApiRegistry,
): Router<AppState> {
  const router = new Router<AppState>();
  const { approvals } = deps;
  /** The document as the update left it (the update returns after its activity wrote the read model). */
  const documentView = async (doc: Document) => {
    const current = await documentsStore(deps.db).findWithApprovers(doc.accountId, doc.id);
    return current ? serializeDocument(current.document, current.approvers) : serializeDocument(doc, []);
  };

  const documentOperation = (
    method: 'get' | 'post',
    path: string,
    operationId: string,
    summary: string,
    description: string,
    schema: z.ZodType,
    errors: number[],
  ) => ({
    method,
    path,
    operationId,
    summary,
    description,
    tags: ['Approvals'],
    auth: method === 'get' ? ('documents:read' as const) : ('documents:write' as const),
    pathParams: IdParams,
    responses: { 200: { description: summary, schema: envelope(schema) } },
    errors,
  });

  route(
    router,
    openapi,
    documentOperation(
      'post',
      '/documents/{id}/send',
      'sendDocument',
      'Send a draft for approval',
      'Starts the approval workflow; answers once the document reads pending. 409 when not a draft or past its deadline, 422 without approvers.',
      DocumentResource,
      [404, 409, 422, 503],
    ),
    async (ctx) => {
      const doc = await loadDocument(deps, ctx, pathId(ctx, 'id', 'Document'));
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
    },
  );

  route(
    router,
    openapi,
    documentOperation(
      'post',
      '/documents/{id}/void',
      'voidDocument',
      'Void a sent document',
      'pending or in_progress → voided; approvers already notified are told. 409 otherwise.',
      DocumentResource,
      [404, 409, 503],
    ),
    async (ctx) => {
      const doc = await loadDocument(deps, ctx, pathId(ctx, 'id', 'Document'));
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
    },
  );

  route(
    router,
    openapi,
    documentOperation(
      'get',
      '/documents/{id}/status',
      'getDocumentStatus',
      'Approval status and progress',
      'Status, progress, whose action it waits for, and each approver with the delivery status of their last WhatsApp message.',
      ApprovalStatus,
      [404],
    ),
    async (ctx) => {
      const doc = await loadDocument(deps, ctx, pathId(ctx, 'id', 'Document'));
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
    },
  );

  route(
    router,
    openapi,
    {
      ...documentOperation(
        'post',
        '/approvers/{id}/remind',
        'remindApprover',
        'Remind an approver',
        'Re-sends the current WhatsApp notification to an approver who was notified and has not acted; 409 otherwise.',
        Reminder,
        [404, 409, 429, 503],
      ),
    },
    async (ctx) => {
      const parsed = uuid.safeParse(pathId(ctx, 'id', 'Approver'));
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
        ({ wamid } = await remindWithinLimits(deps.db, approver.id, deps.config.reminders, () =>
          approvals.remind(doc.id, approver.id),
        ));
      } catch (err) {
        if (err instanceof ApprovalRefused) throw AppError.conflict(`Cannot remind: ${err.message}`);
        throw err;
      }
      ok(ctx, { approver_id: approver.id, reminded_at: isoTime(new Date()), whatsapp_message_id: wamid });
    },
  );

  return router;
}
