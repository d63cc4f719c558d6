import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { Config } from '../../config.ts';
import type { Knex } from '../../db/knex.ts';
import { createDocument } from './create-document.ts';
import { originalFileKey } from './file-keys.ts';
import type { DocumentFile } from './inputs.ts';
import { LIMITS } from '../../domain/model.ts';
import { placementDetails, REFUSALS } from './rules.ts';
import { serializeDocument, type SerializedDocument } from './serialize.ts';
import { deleteDocument, updateDocument } from './update-document.ts';
import { AppError, mergeDetails } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { Storage } from '../../storage/storage.ts';
import type { WebhookDispatcher } from '../webhooks/dispatch.ts';
import { authOf, type AppContext, type AppState } from '../../http/context.ts';
import { createFormReceiver } from './form-receiver.http.ts';
import { coalescedShowDocument, listDocuments, requireDraftDocument } from './read-documents.ts';
import { IdParams, jsonBody, pathId } from '../../api/route-helpers.ts';
import type { OpenApiRegistry } from '../../api/openapi/registry.ts';
import { route } from '../../api/openapi/route.ts';
import { CHANGES_AND_SHOWS_DOCUMENTS } from '../../api/openapi/scopes.ts';
import { ok, okPage } from '../../http/respond.ts';
import {
  CreateDocumentMultipart,
  CreateDocumentSchema,
  DeletedResource,
  DocumentResource,
  ListDocumentsQuery,
  UpdateDocumentMultipart,
  UpdateDocumentSchema,
  UpdateDocumentShape,
} from './documents-schemas.ts';
import { envelope, pageEnvelope } from '../../api/schemas/envelopes.ts';
import { issuesToDetails } from '../../domain/validation.ts';
import { parseBody } from '../../http/validation.ts';
import type { SecretBox } from '../../auth/secret-box.ts';

export interface DocumentsRouterDeps {
  db: Knex;
  secrets: SecretBox;
  config: Config;
  logger: Logger;
  storage: Storage;
  webhooks: WebhookDispatcher;
}

const TAGS = ['Documents'];

/** The multipart receiver of the routes that take a PDF: `receive` stores it under the document's file key. */
interface DocumentForms {
  receive: (
    ctx: AppContext,
    documentId: string,
    fileRequired: boolean,
  ) => ReturnType<FormReceiver['receive']>;
  discard: FormReceiver['discard'];
}
type FormReceiver = ReturnType<typeof createFormReceiver>;

/** GET/POST /documents, GET/PUT/DELETE /documents/{id}. */
export function createDocumentsRouter(deps: DocumentsRouterDeps, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const form = createFormReceiver(deps);
  const forms: DocumentForms = {
    receive: (ctx, documentId, fileRequired) =>
      form.receive(ctx, originalFileKey(authOf(ctx).accountId, documentId), fileRequired),
    discard: form.discard,
  };
  listDocumentsRoute(router, openapi, deps);
  createDocumentRoute(router, openapi, deps, forms);
  getDocumentRoute(router, openapi, deps);
  updateDocumentRoute(router, openapi, deps, forms);
  deleteDocumentRoute(router, openapi, deps, forms);
  return router;
}

const readDeps = (deps: DocumentsRouterDeps) => ({
  db: deps.db,
  secrets: deps.secrets,
  publicBaseUrl: deps.config.http.publicBaseUrl,
});

function listDocumentsRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: DocumentsRouterDeps,
): void {
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/documents',
      operationId: 'listDocuments',
      summary: 'List documents',
      description: 'Newest first. `page` beyond the last page gives an empty list.',
      tags: TAGS,
      auth: 'documents:read',
      query: ListDocumentsQuery,
      responses: { 200: { description: 'A page of documents', schema: pageEnvelope(DocumentResource) } },
      errors: [422],
    },
    async (ctx) => {
      const query = parseBody(ListDocumentsQuery, ctx.query);
      const page = query.page ?? 1;
      const perPage = query.per_page ?? LIMITS.perPageDefault;
      const { documents, total } = await listDocuments(readDeps(deps), authOf(ctx).accountId, {
        status: query.status,
        page,
        perPage,
      });
      okPage(ctx, documents, {
        current_page: page,
        per_page: perPage,
        total,
        last_page: Math.max(1, Math.ceil(total / perPage)),
      });
    },
  );
}

function createDocumentRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: DocumentsRouterDeps,
  forms: DocumentForms,
): void {
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/documents',
      operationId: 'createDocument',
      summary: 'Create a draft document',
      description:
        'Uploads the PDF with its fields and approvers and saves a draft with its WQT-<year>-<sequence> reference. Nothing is sent: POST /documents/{id}/send starts the approval. Emits document.created.',
      tags: TAGS,
      auth: 'documents:write',
      body: { multipart: CreateDocumentMultipart },
      responses: {
        201: {
          description: 'The draft',
          schema: envelope(DocumentResource),
          headers: { Location: { description: 'The new document', schema: { type: 'string' } } },
        },
      },
      errors: [400, 409, 413, 415, 422, 503],
    },
    async (ctx) => {
      if (!ctx.is('multipart')) {
        throw new AppError(
          'unsupported_media_type',
          'POST /documents takes multipart/form-data: the PDF in the part "file" and the other fields as parts',
        );
      }
      const id = randomUUID();
      const form = await forms.receive(ctx, id, true);
      try {
        const document = await createFromForm(deps, authOf(ctx).accountId, id, form);
        ctx.set('Location', `${ctx.path}/${document.id}`);
        ok(ctx, document, 201);
      } catch (err) {
        await forms.discard(form.storedKey);
        throw err;
      }
    },
  );
}

/** Checks the received form, saves the draft, and hands document.created to the webhooks. */
async function createFromForm(
  deps: DocumentsRouterDeps,
  accountId: string,
  id: string,
  form: Awaited<ReturnType<DocumentForms['receive']>>,
): Promise<SerializedDocument> {
  const parsed = CreateDocumentSchema.safeParse(form.value);
  const details = mergeDetails(
    form.details,
    parsed.success ? {} : issuesToDetails(parsed.error.issues),
    parsed.success && form.file ? placementDetails(parsed.data.approvers, form.file.pageCount) : {},
  );
  if (!parsed.success || !form.file || Object.keys(details).length) throw AppError.validation(details);
  const { document, approvers, created } = await createDocument(deps.db, {
    id,
    accountId,
    fields: parsed.data,
    file: form.file,
  });
  // document.created is committed with the document. Delivery never fails the creation: an event left
  // undispatched goes out before the document's next event, or with the webhook outbox sweep.
  await deps.webhooks
    .dispatchRecorded([created])
    .catch((err: unknown) =>
      deps.logger.warn({ err, documentId: document.id }, 'document.created not dispatched yet'),
    );
  return serializeDocument(document, approvers);
}

function getDocumentRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: DocumentsRouterDeps,
): void {
  // One per app: the reads of one event-loop turn share a query.
  const show = coalescedShowDocument(readDeps(deps));
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/documents/{id}',
      operationId: 'getDocument',
      summary: 'Get a document with its approvers',
      tags: TAGS,
      auth: 'documents:read',
      pathParams: IdParams,
      responses: { 200: { description: 'The document', schema: envelope(DocumentResource) } },
      errors: [404],
    },
    async (ctx) => {
      ok(ctx, await show(authOf(ctx).accountId, pathId(ctx, 'id', 'Document')));
    },
  );
}

function updateDocumentRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: DocumentsRouterDeps,
  forms: DocumentForms,
): void {
  route(
    router,
    openapi,
    {
      method: 'put',
      path: '/documents/{id}',
      operationId: 'updateDocument',
      summary: 'Update a draft',
      description:
        'Only the given fields change (title sets both languages; title_ar or title_en one). expires_in_days counts from now. approvers, when given, replaces every approver. Send multipart/form-data to replace the PDF. Drafts only: 409 otherwise. Needs documents:read as well: the answer is the whole document.',
      tags: TAGS,
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
      pathParams: IdParams,
      body: { json: UpdateDocumentShape, multipart: UpdateDocumentMultipart, required: false },
      responses: { 200: { description: 'The updated draft', schema: envelope(DocumentResource) } },
      errors: [400, 404, 409, 413, 415, 422, 503],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const id = pathId(ctx, 'id', 'Document');
      await requireDraftDocument(deps.db, accountId, id, REFUSALS.update);
      const { value, file, storedKey } = await readUpdateBody(ctx, id, forms);
      try {
        const update = parseBody(UpdateDocumentSchema, value);
        const result = await updateDocument(deps.db, { accountId, id, update, file });
        await forms.discard(result.replacedFileKey);
        ok(ctx, serializeDocument(result.document, result.approvers));
      } catch (err) {
        await forms.discard(storedKey);
        throw err;
      }
    },
  );
}

/** The body of PUT /documents/{id}: JSON, or multipart with a new PDF (stored under `storedKey`). */
async function readUpdateBody(
  ctx: AppContext,
  id: string,
  forms: DocumentForms,
): Promise<{ value: unknown; file?: DocumentFile; storedKey?: string }> {
  if (!ctx.is('multipart')) {
    return { value: jsonBody(ctx, ', or as multipart/form-data to replace the file') };
  }
  const form = await forms.receive(ctx, id, false);
  if (Object.keys(form.details).length) {
    await forms.discard(form.storedKey);
    throw AppError.validation(form.details);
  }
  return { value: form.value, file: form.file, storedKey: form.storedKey };
}

function deleteDocumentRoute(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  deps: DocumentsRouterDeps,
  forms: DocumentForms,
): void {
  route(
    router,
    openapi,
    {
      method: 'delete',
      path: '/documents/{id}',
      operationId: 'deleteDocument',
      summary: 'Delete a draft',
      description: 'Removes the draft, its approvers and its stored file. Drafts only: 409 otherwise.',
      tags: TAGS,
      auth: 'documents:write',
      pathParams: IdParams,
      responses: { 200: { description: 'Deleted', schema: envelope(DeletedResource) } },
      errors: [404, 409],
    },
    async (ctx) => {
      const id = pathId(ctx, 'id', 'Document');
      const { fileKey } = await deleteDocument(deps.db, { accountId: authOf(ctx).accountId, id });
      await forms.discard(fileKey);
      ok(ctx, { id, deleted: true });
    },
  );
}
