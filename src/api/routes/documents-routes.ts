import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { Config } from '../../config.ts';
import type { Knex } from '../../db/knex.ts';
import {
  coalescedDocumentReads,
  documentsStore,
  openVerificationToken,
} from '../../db/stores/documents-store.ts';
import { createDocument } from '../../documents/create-document.ts';
import { originalFileKey } from '../../documents/file-keys.ts';
import type { DocumentFile } from '../../documents/inputs.ts';
import { LIMITS } from '../../domain/model.ts';
import { placementDetails, REFUSALS, requireDraft } from '../../documents/rules.ts';
import { serializeDocument } from '../../documents/serialize.ts';
import { deleteDocument, updateDocument } from '../../documents/update-document.ts';
import { AppError, mergeDetails } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { Storage } from '../../storage/storage.ts';
import type { WebhookDispatcher } from '../../features/webhooks/dispatch.ts';
import { authOf, type AppContext, type AppState } from '../../http/context.ts';
import { createFormReceiver } from '../documents/form-receiver.ts';
import { IdParams, jsonBody, pathId } from '../route-helpers.ts';
import type { OpenApiRegistry } from '../openapi/registry.ts';
import { route } from '../openapi/route.ts';
import { CHANGES_AND_SHOWS_DOCUMENTS } from '../openapi/scopes.ts';
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
} from '../schemas/documents.ts';
import { envelope, pageEnvelope } from '../schemas/envelopes.ts';
import { issuesToDetails } from '../../domain/validation.ts';
import { parseBody } from '../../http/validation.ts';
import { verificationUrl } from '../../db/stores/verifications-store.ts';
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

/** GET/POST /documents, GET/PUT/DELETE /documents/{id}. */
export function createDocumentsRouter(deps: DocumentsRouterDeps, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { db, webhooks } = deps;
  const reads = coalescedDocumentReads(db);

  const form = createFormReceiver(deps);
  const { discard } = form;
  const receive = (ctx: AppContext, documentId: string, fileRequired: boolean) =>
    form.receive(ctx, originalFileKey(authOf(ctx).accountId, documentId), fileRequired);

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
      const { accountId } = authOf(ctx);
      const query = parseBody(ListDocumentsQuery, ctx.query);
      const page = query.page ?? 1;
      const perPage = query.per_page ?? LIMITS.perPageDefault;
      const { documents, approvers, verificationSealed, total } = await documentsStore(db).list(accountId, {
        status: query.status,
        limit: perPage,
        offset: (page - 1) * perPage,
      });
      const base = deps.config.http.publicBaseUrl;
      okPage(
        ctx,
        documents.map((d) => {
          const sealed = d.status === 'approved' ? verificationSealed.get(d.id) : undefined;
          return serializeDocument(d, approvers.get(d.id) ?? [], {
            verificationUrl:
              sealed && verificationUrl(base, openVerificationToken(d.id, sealed, deps.secrets)),
          });
        }),
        { current_page: page, per_page: perPage, total, last_page: Math.max(1, Math.ceil(total / perPage)) },
      );
    },
  );

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
      const { accountId } = authOf(ctx);
      if (!ctx.is('multipart')) {
        throw new AppError(
          'unsupported_media_type',
          'POST /documents takes multipart/form-data: the PDF in the part "file" and the other fields as parts',
        );
      }
      const id = randomUUID();
      const form = await receive(ctx, id, true);
      try {
        const parsed = CreateDocumentSchema.safeParse(form.value);
        const details = mergeDetails(
          form.details,
          parsed.success ? {} : issuesToDetails(parsed.error.issues),
          parsed.success && form.file ? placementDetails(parsed.data.approvers, form.file.pageCount) : {},
        );
        if (!parsed.success || !form.file || Object.keys(details).length) throw AppError.validation(details);
        const { document, approvers } = await createDocument(db, {
          id,
          accountId,
          fields: parsed.data,
          file: form.file,
        });
        // document.created is committed with the document. Delivery never fails the creation: an event left
        // undispatched goes out before the document's next event, or with the webhook outbox sweep.
        await webhooks
          .dispatchDocument(document.id)
          .catch((err: unknown) =>
            deps.logger.warn({ err, documentId: document.id }, 'document.created not dispatched yet'),
          );
        ctx.set('Location', `${ctx.path}/${document.id}`);
        ok(ctx, serializeDocument(document, approvers), 201);
      } catch (err) {
        await discard(form.storedKey);
        throw err;
      }
    },
  );

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
      const { accountId } = authOf(ctx);
      const found = await reads.findWithApprovers(accountId, pathId(ctx, 'id', 'Document'));
      if (!found) throw AppError.notFound('Document');
      const { document, approvers, verificationSealed: sealed } = found;
      ok(
        ctx,
        serializeDocument(document, approvers, {
          verificationUrl:
            document.status === 'approved' && sealed
              ? verificationUrl(
                  deps.config.http.publicBaseUrl,
                  openVerificationToken(document.id, sealed, deps.secrets),
                )
              : undefined,
        }),
      );
    },
  );

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
      const existing = await documentsStore(db).findById(accountId, id);
      if (!existing) throw AppError.notFound('Document');
      requireDraft(existing, REFUSALS.update);

      let value: unknown;
      let file: DocumentFile | undefined;
      let storedKey: string | undefined;
      if (ctx.is('multipart')) {
        const form = await receive(ctx, id, false);
        if (Object.keys(form.details).length) {
          await discard(form.storedKey);
          throw AppError.validation(form.details);
        }
        value = form.value;
        file = form.file;
        storedKey = form.storedKey;
      } else {
        value = jsonBody(ctx, ', or as multipart/form-data to replace the file');
      }
      try {
        const update = parseBody(UpdateDocumentSchema, value);
        const result = await updateDocument(db, { accountId, id, update, file });
        await discard(result.replacedFileKey);
        ok(ctx, serializeDocument(result.document, result.approvers));
      } catch (err) {
        await discard(storedKey);
        throw err;
      }
    },
  );

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
      const { accountId } = authOf(ctx);
      const id = pathId(ctx, 'id', 'Document');
      const { fileKey } = await deleteDocument(db, { accountId, id });
      await discard(fileKey);
      ok(ctx, { id, deleted: true });
    },
  );

  return router;
}
