import Router from '@koa/router';
import type { Knex } from '../../db/knex.ts';
import { addApprover, deleteApprover, listApprovers, updateApprover } from './approvers.ts';
import { LIMITS } from '../../domain/model.ts';
import { REFUSALS } from './rules.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { serializeApprover } from './serialize.ts';
import { requireDraftDocument } from './read-documents.ts';
import { approverLink, requireChangeableApprover, showApprover } from './read-approvers.ts';
import { authOf, type AppState } from '../../http/context.ts';
import { DocumentIdParams, IdParams, jsonBody, pathId } from '../../api/route-helpers.ts';
import type { OpenApiRegistry } from '../../api/openapi/registry.ts';
import { route } from '../../api/openapi/route.ts';
import { CHANGES_AND_SHOWS_DOCUMENTS } from '../../api/openapi/scopes.ts';
import { ok, okPage } from '../../http/respond.ts';
import {
  ApproverInputSchema,
  ApproverInputShape,
  ApproverLinkResource,
  ApproverResource,
  ApproverUpdateSchema,
  ApproverUpdateShape,
} from './approvers-schemas.ts';
import { DeletedResource } from './documents-schemas.ts';
import { envelope, pageEnvelope } from '../../api/schemas/envelopes.ts';
import { parseBody } from '../../http/validation.ts';

const TAGS = ['Approvers'];

type ApproversRouterDeps = { db: Knex; secrets: SecretBox; config: { http: { publicBaseUrl: string } } };

/** GET/POST /documents/{documentId}/approvers, GET/PUT/DELETE /approvers/{id}. */
export function createApproversRouter(deps: ApproversRouterDeps, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  listApproversRoute(router, openapi, deps);
  addApproverRoute(router, openapi, deps);
  getApproverRoute(router, openapi, deps);
  approverLinkRoute(router, openapi, deps);
  updateApproverRoute(router, openapi, deps);
  deleteApproverRoute(router, openapi, deps);
  return router;
}

function listApproversRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: ApproversRouterDeps,
): void {
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/documents/{documentId}/approvers',
      operationId: 'listApprovers',
      summary: "List a document's approvers",
      description: 'Ordered by order_index; all of them on one page (at most 50).',
      tags: TAGS,
      auth: 'documents:read',
      pathParams: DocumentIdParams,
      responses: { 200: { description: 'The approvers', schema: pageEnvelope(ApproverResource) } },
      errors: [404],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const documentId = pathId(ctx, 'documentId', 'Document');
      const { approvers } = await listApprovers(deps.db, { accountId, documentId });
      okPage(ctx, approvers.map(serializeApprover), {
        current_page: 1,
        per_page: LIMITS.approversMax,
        total: approvers.length,
        last_page: 1,
      });
    },
  );
}

function addApproverRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: ApproversRouterDeps,
): void {
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/documents/{documentId}/approvers',
      operationId: 'addApprover',
      summary: 'Add an approver to a draft',
      description:
        "Without order_index the approver goes last, at a position of its own; with another approver's order_index it joins that approver's signing group. Drafts only: 409 once the document has been sent.",
      tags: TAGS,
      auth: 'documents:write',
      pathParams: DocumentIdParams,
      body: { json: ApproverInputShape },
      responses: { 201: { description: 'The new approver', schema: envelope(ApproverResource) } },
      errors: [400, 404, 409, 415, 422],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const documentId = pathId(ctx, 'documentId', 'Document');
      await requireDraftDocument(deps.db, accountId, documentId, REFUSALS.addApprover);
      const approver = parseBody(ApproverInputSchema, jsonBody(ctx));
      const created = await addApprover(deps.db, { accountId, documentId, approver });
      ok(ctx, serializeApprover(created), 201);
    },
  );
}

function getApproverRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: ApproversRouterDeps,
): void {
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/approvers/{id}',
      operationId: 'getApprover',
      summary: 'Get an approver',
      tags: TAGS,
      auth: 'documents:read',
      pathParams: IdParams,
      responses: { 200: { description: 'The approver', schema: envelope(ApproverResource) } },
      errors: [404],
    },
    async (ctx) => {
      const approver = await showApprover(deps.db, authOf(ctx).accountId, pathId(ctx, 'id', 'Approver'));
      ok(ctx, serializeApprover(approver));
    },
  );
}

function approverLinkRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: ApproversRouterDeps,
): void {
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/approvers/{id}/link',
      operationId: 'getApproverLink',
      summary: "An approver's approval page URL",
      description:
        "For showing the approver their page in the account's own app (often with notify: false, when Wathiq sends them nothing). The URL is the approver's for good: it exists from the moment the document is sent, and usable_now tells whether they can act on it now (it is their turn and the document is open). Anyone holding the URL can act as the approver, so this needs documents:write as well as documents:read, and it should be handed only to them. This reads the link and never makes one: 409 for a draft, and for an approver who has none (a document closed before it reached them).",
      tags: TAGS,
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
      pathParams: IdParams,
      responses: { 200: { description: 'The link', schema: envelope(ApproverLinkResource) } },
      errors: [404, 409],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const publicBaseUrl = deps.config.http.publicBaseUrl;
      const id = pathId(ctx, 'id', 'Approver');
      ok(ctx, await approverLink({ db: deps.db, secrets: deps.secrets, publicBaseUrl }, accountId, id));
    },
  );
}

function updateApproverRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: ApproversRouterDeps,
): void {
  route(
    router,
    openapi,
    {
      method: 'put',
      path: '/approvers/{id}',
      operationId: 'updateApprover',
      summary: 'Update an approver of a draft',
      description:
        'Only the given fields change. A placement (page, x, y, width) is replaced as a whole; page: null removes it. An order_index another approver has makes the two a signing group. Drafts only: 409 otherwise. Needs documents:read as well: the answer shows the approver, and a new phone receives the document once it is sent.',
      tags: TAGS,
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
      pathParams: IdParams,
      body: { json: ApproverUpdateShape, required: false },
      responses: { 200: { description: 'The approver', schema: envelope(ApproverResource) } },
      errors: [400, 404, 409, 415, 422],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const id = pathId(ctx, 'id', 'Approver');
      await requireChangeableApprover(deps.db, accountId, id, REFUSALS.changeApprover);
      const update = parseBody(ApproverUpdateSchema, jsonBody(ctx));
      ok(ctx, serializeApprover(await updateApprover(deps.db, { accountId, id, update })));
    },
  );
}

function deleteApproverRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: ApproversRouterDeps,
): void {
  route(
    router,
    openapi,
    {
      method: 'delete',
      path: '/approvers/{id}',
      operationId: 'deleteApprover',
      summary: 'Remove an approver from a draft',
      description: 'Drafts only: 409 otherwise.',
      tags: TAGS,
      auth: 'documents:write',
      pathParams: IdParams,
      responses: { 200: { description: 'Deleted', schema: envelope(DeletedResource) } },
      errors: [404, 409],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const id = pathId(ctx, 'id', 'Approver');
      await deleteApprover(deps.db, { accountId, id });
      ok(ctx, { id, deleted: true });
    },
  );
}
