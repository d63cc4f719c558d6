import Router from '@koa/router';
import { z } from 'zod';
import { approvalStatus } from '../../features/approval/approval-status.ts';
import { remindApprover, type RemindDeps } from '../../features/approval/remind-approver.ts';
import { sendDocument } from '../../features/approval/send-document.ts';
import { voidDocument } from '../../features/approval/void-document.ts';
import { authOf, type AppState } from '../../http/context.ts';
import { ok } from '../../http/respond.ts';
import type { OpenApiRegistry } from '../openapi/registry.ts';
import { route } from '../openapi/route.ts';
import { CHANGES_AND_SHOWS_DOCUMENTS } from '../openapi/scopes.ts';
import { IdParams, pathId } from '../route-helpers.ts';
import { ApproverResource } from '../../features/documents/approvers-schemas.ts';
import { DocumentResource, Finalization } from '../../features/documents/documents-schemas.ts';
import { envelope, Timestamp } from '../schemas/envelopes.ts';

const Notification = z
  .object({
    status: z.string().nullable().meta({
      description:
        'accepted, sent, delivered, read or failed (WhatsApp); skipped when the approver has notify: false (their turn came, nothing was sent)',
    }),
    error: z
      .looseObject({
        message: z.string(),
        code: z.number().optional(),
        details: z.string().optional(),
        retryable: z.boolean().optional(),
      })
      .nullable()
      .meta({
        description:
          "Why the last message failed: WhatsApp's error as the Cloud API reported it (its code, message and details, and any other fields it gave), or the message alone when it could not be sent",
      }),
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
    finalization: Finalization,
    progress: z.object({ completed: z.number().int(), total: z.number().int() }),
    current_approver_ids: z.array(z.uuid()).meta({
      description:
        'Whose action the document waits for now: sequential, the approvers of the current signing group (the lowest order_index with an approver still to act) who have not acted; parallel, everyone who has not acted',
    }),
    approvers: z.array(ApproverResource.extend({ notification: Notification })),
  })
  .meta({ id: 'ApprovalStatus' });

const Reminder = z
  .object({ approver_id: z.uuid(), reminded_at: Timestamp, whatsapp_message_id: z.string().nullable() })
  .meta({ id: 'Reminder' });

/** The OpenAPI description of an approval operation on one document or approver, answered with `schema`. */
function documentOperation(
  method: 'get' | 'post',
  path: string,
  operationId: string,
  summary: string,
  description: string,
  schema: z.ZodType,
  errors: number[],
) {
  return {
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
  };
}

/**
 * Sending, voiding, reminding and the approval status (docs/product-rules.md §3–§4): HTTP over the approval
 * services in src/features/approval, which go through the approval workflow and answer from PostgreSQL.
 */
export function createApprovalRouter(deps: RemindDeps, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();

  // Sending hands the document to the approvers' phones, and both answers are the whole document.
  route(
    router,
    openapi,
    {
      ...documentOperation(
        'post',
        '/documents/{id}/send',
        'sendDocument',
        'Send a draft for approval',
        'Starts the approval workflow; answers once the document reads pending. 409 when not a draft or past its deadline, 422 without approvers. Needs documents:read as well as documents:write.',
        DocumentResource,
        [404, 409, 422, 503],
      ),
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
    },
    async (ctx) => {
      ok(ctx, await sendDocument(deps, authOf(ctx).accountId, pathId(ctx, 'id', 'Document')));
    },
  );

  route(
    router,
    openapi,
    {
      ...documentOperation(
        'post',
        '/documents/{id}/void',
        'voidDocument',
        'Void a sent document',
        'pending or in_progress → voided; approvers already notified are told. 409 otherwise. Needs documents:read as well as documents:write.',
        DocumentResource,
        [404, 409, 503],
      ),
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
    },
    async (ctx) => {
      ok(ctx, await voidDocument(deps, authOf(ctx).accountId, pathId(ctx, 'id', 'Document')));
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
      ok(ctx, await approvalStatus(deps.db, authOf(ctx).accountId, pathId(ctx, 'id', 'Document')));
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
      ok(ctx, await remindApprover(deps, authOf(ctx).accountId, pathId(ctx, 'id', 'Approver')));
    },
  );

  return router;
}
