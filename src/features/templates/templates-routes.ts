import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { ApprovalDeps } from '../approval/client.ts';
import { sendDocument } from '../approval/send-document.ts';
import type { Config } from '../../config.ts';
import type { Knex } from '../../db/knex.ts';
import { templateFileKey } from '../documents/file-keys.ts';
import type { DocumentFile } from '../documents/inputs.ts';
import { serializeDocument } from '../documents/serialize.ts';
import { deleteDocument } from '../documents/update-document.ts';
import { LIMITS } from '../../domain/model.ts';
import { issuesToDetails } from '../../domain/validation.ts';
import { addDetail, AppError, mergeDetails, newDetails, type ErrorDetails } from '../../errors.ts';
import { authOf, type AppContext, type AppState } from '../../http/context.ts';
import { ok, okPage } from '../../http/respond.ts';
import { parseBody } from '../../http/validation.ts';
import { withoutPrototypes } from '../../http/untrusted.ts';
import type { Logger } from '../../logger.ts';
import type { Storage } from '../../storage/storage.ts';
import type { WebhookDispatcher } from '../webhooks/dispatch.ts';
import { createFormReceiver } from '../documents/form-receiver.http.ts';
import type { OpenApiRegistry } from '../../api/openapi/registry.ts';
import { route } from '../../api/openapi/route.ts';
import { CHANGES_AND_SHOWS_DOCUMENTS } from '../../api/openapi/scopes.ts';
import { IdParams, jsonBody, pathId } from '../../api/route-helpers.ts';
import { DocumentResource } from '../documents/documents-schemas.ts';
import { envelope, pageEnvelope } from '../../api/schemas/envelopes.ts';
import { createDocumentFromTemplate } from './document-from-template.ts';
import {
  CreateTemplateSchema,
  CreateTemplateShape,
  DocumentFromTemplateShape,
  ListTemplatesQuery,
  RecipientInput,
  TemplateResource,
  UpdateTemplateSchema,
  UpdateTemplateShape,
} from './schemas.ts';
import { serializeTemplate } from './serialize.ts';
import {
  archiveTemplate,
  createTemplate,
  listTemplates,
  loadTemplate,
  updateTemplate,
} from './template-service.ts';

export interface TemplatesRouterDeps extends ApprovalDeps {
  db: Knex;
  config: Config;
  logger: Logger;
  storage: Storage;
  webhooks: WebhookDispatcher;
}

const TAGS = ['Templates'];
const MULTIPART_NOTE =
  'multipart/form-data like POST /documents: the PDF in the part "file", roles as one part holding their JSON list, the other fields as parts.';

const TemplateMultipart = CreateTemplateShape.extend({
  file: CreateTemplateShape.shape.title.meta({ type: 'string', format: 'binary', description: 'The PDF' }),
}).meta({ required: ['file', 'roles'], description: MULTIPART_NOTE });
const UpdateMultipart = UpdateTemplateShape.meta({
  description: `${MULTIPART_NOTE} A new "file" replaces the PDF.`,
});

/** roles[N][…] parts: roles come as one JSON part, so these would otherwise be silently ignored. */
function rolePartDetails(value: Record<string, unknown>): ErrorDetails {
  const details = newDetails();
  for (const name of Object.keys(value))
    if (name.startsWith('roles') && name !== 'roles')
      addDetail(
        details,
        name,
        'roles are sent as one part holding their JSON list, e.g. roles=[{"key":"employee",…}]',
      );
  return details;
}

type FormReceiver = ReturnType<typeof createFormReceiver>;

/** What each route of the templates is mounted with. */
interface Mount {
  router: Router<AppState>;
  openapi: OpenApiRegistry;
  deps: TemplatesRouterDeps;
  form: FormReceiver;
}

/** The template's form: its PDF stored under the template's key, and roles sent as roles[N][…] refused. */
async function readForm(form: FormReceiver, ctx: AppContext, templateId: string, fileRequired: boolean) {
  const received = await form.receive(ctx, templateFileKey(authOf(ctx).accountId, templateId), fileRequired);
  const details = mergeDetails(received.details, rolePartDetails(received.value));
  return { ...received, details };
}

/** /templates, /templates/{id}, /templates/{id}/archive and /templates/{id}/documents. */
export function createTemplatesRouter(deps: TemplatesRouterDeps, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  // DocumentFromTemplateShape's recipients name it by $ref: the service checks each one against the roles.
  openapi.include(RecipientInput, 'input');
  const mount: Mount = { router, openapi, deps, form: createFormReceiver(deps) };
  mountCreate(mount);
  mountReads(mount);
  mountUpdate(mount);
  mountArchive(mount);
  mountDocumentFromTemplate(mount);
  return router;
}

function mountCreate({ router, openapi, deps, form }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/templates',
      operationId: 'createTemplate',
      summary: 'Create a template',
      description:
        "A PDF with the document settings and roles instead of people: {key, label_ar, label_en, action_type, order_index, placement, verification, notify}. The PDF is checked as a document's is. The template is version 1; every update makes the next version.",
      tags: TAGS,
      auth: 'documents:write',
      body: { multipart: TemplateMultipart },
      responses: { 201: { description: 'The template', schema: envelope(TemplateResource) } },
      errors: [400, 413, 415, 422, 503],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      if (!ctx.is('multipart'))
        throw new AppError('unsupported_media_type', `POST /templates takes ${MULTIPART_NOTE}`);
      const id = randomUUID();
      const received = await readForm(form, ctx, id, true);
      try {
        const parsed = CreateTemplateSchema.safeParse(withoutPrototypes(received.value));
        const details = mergeDetails(
          received.details,
          parsed.success ? {} : issuesToDetails(parsed.error.issues),
        );
        if (!parsed.success || !received.file || Object.keys(details).length)
          throw AppError.validation(details);
        const created = await createTemplate(db, { id, accountId, fields: parsed.data, file: received.file });
        ctx.set('Location', `${ctx.path}/${id}`);
        ok(ctx, serializeTemplate(created), 201);
      } catch (err) {
        await form.discard(received.storedKey);
        throw err;
      }
    },
  );
}

function mountReads({ router, openapi, deps }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/templates',
      operationId: 'listTemplates',
      summary: 'List templates',
      description: 'Newest first, each at its current version; archived ones only with archived=true.',
      tags: TAGS,
      auth: 'documents:read',
      query: ListTemplatesQuery,
      responses: { 200: { description: 'A page of templates', schema: pageEnvelope(TemplateResource) } },
      errors: [422],
    },
    async (ctx) => {
      const query = parseBody(ListTemplatesQuery, ctx.query);
      const page = query.page ?? 1;
      const perPage = query.per_page ?? LIMITS.perPageDefault;
      const { items, total } = await listTemplates(db, authOf(ctx).accountId, {
        archived: query.archived ?? false,
        limit: perPage,
        offset: (page - 1) * perPage,
      });
      okPage(ctx, items.map(serializeTemplate), {
        current_page: page,
        per_page: perPage,
        total,
        last_page: Math.max(1, Math.ceil(total / perPage)),
      });
    },
  );

  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/templates/{id}',
      operationId: 'getTemplate',
      summary: 'Get a template at its current version',
      tags: TAGS,
      auth: 'documents:read',
      pathParams: IdParams,
      responses: { 200: { description: 'The template', schema: envelope(TemplateResource) } },
      errors: [404],
    },
    async (ctx) => {
      const found = await loadTemplate(db, {
        accountId: authOf(ctx).accountId,
        id: pathId(ctx, 'id', 'Template'),
      });
      ok(ctx, serializeTemplate(found));
    },
  );
}

function mountUpdate({ router, openapi, deps, form }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'put',
      path: '/templates/{id}',
      operationId: 'updateTemplate',
      summary: 'Update a template (a new version)',
      description:
        'The given fields (and, as multipart, a new "file") replace the current version\'s in a new version; documents keep the version they were made from. 409 once archived. Needs documents:read as well: the answer is the whole template.',
      tags: TAGS,
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
      pathParams: IdParams,
      body: { json: UpdateTemplateShape, multipart: UpdateMultipart, required: false },
      responses: {
        200: { description: 'The template at its new version', schema: envelope(TemplateResource) },
      },
      errors: [400, 404, 409, 413, 415, 422, 503],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const id = pathId(ctx, 'id', 'Template');
      await loadTemplate(db, { accountId, id, usable: true });
      let value: unknown;
      let file: DocumentFile | undefined;
      let storedKey: string | undefined;
      if (ctx.is('multipart')) {
        const received = await readForm(form, ctx, id, false);
        storedKey = received.storedKey;
        if (Object.keys(received.details).length) {
          await form.discard(storedKey);
          throw AppError.validation(received.details);
        }
        value = received.value;
        file = received.file;
      } else {
        value = jsonBody(ctx, ', or as multipart/form-data to replace the file');
      }
      try {
        const update = parseBody(UpdateTemplateSchema, value);
        ok(ctx, serializeTemplate(await updateTemplate(db, { accountId, id, update, file })));
      } catch (err) {
        await form.discard(storedKey);
        throw err;
      }
    },
  );
}

function mountArchive({ router, openapi, deps }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/templates/{id}/archive',
      operationId: 'archiveTemplate',
      summary: 'Archive a template',
      description:
        'It makes no new documents, versions or bulk sends; documents and bulk sends made from it go on. Archiving twice answers the same.',
      tags: TAGS,
      auth: 'documents:write',
      pathParams: IdParams,
      responses: { 200: { description: 'The archived template', schema: envelope(TemplateResource) } },
      errors: [404],
    },
    async (ctx) => {
      const archived = await archiveTemplate(db, {
        accountId: authOf(ctx).accountId,
        id: pathId(ctx, 'id', 'Template'),
      });
      ok(ctx, serializeTemplate(archived));
    },
  );
}

function mountDocumentFromTemplate({ router, openapi, deps }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/templates/{id}/documents',
      operationId: 'createDocumentFromTemplate',
      summary: 'Create a document from a template',
      description:
        "A draft exactly as POST /documents would make it, from the template's current version, with each role filled by its recipient and template: {id, version} on it; with send: true it is sent at once (as POST /documents/{id}/send; if the send is refused the draft is removed and the refusal answered). A missing or unknown role is a 422 naming it. Needs documents:read as well: the answer carries the template's content and send: true hands it to the phones given.",
      tags: TAGS,
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
      pathParams: IdParams,
      body: { json: DocumentFromTemplateShape, required: true },
      responses: {
        201: {
          description: 'The draft, or with send: true the sent (pending) document',
          schema: envelope(DocumentResource),
          headers: {
            Location: {
              description: 'The new document',
              schema: { type: 'string', format: 'uri-reference' },
            },
          },
        },
      },
      errors: [400, 404, 409, 415, 422, 503],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const templateId = pathId(ctx, 'id', 'Template');
      const body = withoutPrototypes(jsonBody(ctx));
      const parsed = DocumentFromTemplateShape.safeParse(body);
      const details = parsed.success ? {} : issuesToDetails(parsed.error.issues);
      const v = parsed.success ? parsed.data : undefined;
      const titleAr = v?.title_ar ?? v?.title;
      const titleEn = v?.title_en ?? v?.title;
      const { document, approvers, created } = await createDocumentFromTemplate(db, {
        accountId,
        templateId,
        recipients: (body as { recipients?: unknown } | null)?.recipients,
        overrides: {
          ...(titleAr !== undefined && { titleAr }),
          ...(titleEn !== undefined && { titleEn }),
          ...(v?.cc !== undefined && { cc: v.cc }),
        },
        details,
      });
      await deps.webhooks
        .dispatchRecorded([created])
        .catch((err: unknown) =>
          deps.logger.warn({ err, documentId: document.id }, 'document.created not dispatched yet'),
        );
      ctx.set(
        'Location',
        `${ctx.path.replace(/\/templates\/[^/]+\/documents$/, '/documents')}/${document.id}`,
      );
      if (!v?.send) return ok(ctx, serializeDocument(document, approvers), 201);
      try {
        ok(ctx, await sendDocument(deps, accountId, document.id), 201);
      } catch (err) {
        // Not sent: nothing is left behind, so the same request can simply be made again.
        await deleteDocument(db, { accountId, id: document.id }).catch((e: unknown) =>
          deps.logger.warn({ err: e, documentId: document.id }, 'an unsent draft from a template was kept'),
        );
        throw err;
      }
    },
  );
}
