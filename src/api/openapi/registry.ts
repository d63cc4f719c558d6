import { z } from 'zod';
import type { ApiScope } from '../../auth/api-key-format.ts';
import { ErrorEnvelope } from '../schemas/envelopes.ts';
import { RESPONSE_LINKS, type ApiLink } from './links.ts';

type JsonSchema = Record<string, unknown>;
type ParamsSchema = z.ZodObject<Record<string, z.ZodType>>;
type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ApiResponseSpec {
  description: string;
  /** The JSON body; omitted for bodies that are not JSON (files). */
  schema?: z.ZodType;
  /** Other media types, e.g. `{ 'application/pdf': { type: 'string', contentMediaType: 'application/pdf' } }`. */
  content?: Record<string, JsonSchema>;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

/** One operation of the API: the same zod schemas validate the request and describe it here. */
export interface ApiOperation {
  method: HttpMethod;
  /** Relative to /api/v1, OpenAPI style: `/documents/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /**
   * The scopes the key needs, all of them (`false`: public). Every authenticated operation names at least one, so
   * what a key may do is always read off its scopes.
   */
  auth: ApiScope | readonly [ApiScope, ...ApiScope[]] | false;
  pathParams?: ParamsSchema;
  query?: ParamsSchema;
  body?: { json?: z.ZodType; multipart?: z.ZodType; required?: boolean; description?: string };
  responses: Record<number, ApiResponseSpec>;
  /**
   * Error statuses of this operation besides the implicit ones: 500; 401, 403, 429 when protected; 400, 413 on
   * POST/PUT; 409, 422 where the Idempotency-Key header applies.
   */
  errors?: number[];
}

export interface WebhookHeader {
  description: string;
  schema: JsonSchema;
}

/** One event Wathiq POSTs to its subscribers: the top-level `webhooks` of the document. */
export interface WebhookSpec {
  event: string;
  operationId: string;
  summary: string;
  description: string;
  /** The JSON body of the delivery. */
  body: z.ZodType;
  /** Headers every delivery of the event carries. */
  headers: Record<string, WebhookHeader>;
}

/** What each tag's operations are about, for the rendered reference's section headings. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Service: 'Health and this document: public, no key needed.',
  Documents:
    'Upload a PDF with its approvers, change or delete it while it is a draft, list and read documents, and download the signed PDF.',
  Approvers: 'Add, change and remove the approvers of a draft; read an approver and their approval link.',
  Approvals: 'Send a draft for approval, follow its status, remind an approver, or void it.',
  Webhooks: 'Signed event deliveries to your URLs, their delivery log, and redelivery.',
  Account: "The account's settings.",
  Templates:
    'A PDF with its settings and roles instead of people, versioned; documents made from it for the people given.',
  'Bulk sends':
    'A template sent to a list of people (JSON rows or a CSV file), one document per row, exactly once, paced to WhatsApp.',
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request (malformed JSON or multipart body)',
  401: 'Missing, malformed, unknown or revoked API key',
  403: 'The API key lacks the required scope',
  404: 'No such resource in this account',
  409: "Conflict: refused by the resource's current status (the message names it), or a request with the same Idempotency-Key is still in progress",
  413: 'Request body too large',
  415: 'Unsupported content type',
  422: 'Validation failed; details maps each field (or the Idempotency-Key header) to its messages',
  429: 'Rate limit exceeded; Retry-After says when to try again',
  500: 'Server error',
  503: 'A dependency is unavailable or busy; Retry-After, when present, says when to try again',
};

/**
 * `Idempotency-Key` as src/api/middleware/idempotency.ts accepts it (KEY_PATTERN: 1 to 255 visible ASCII
 * characters); the middleware treats an empty header as none, so the pattern admits the empty value too.
 */
const IDEMPOTENCY_KEY_HEADER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the POST safe to retry: the same key with the same request within 24 hours replays the first response (marked by the Idempotent-Replayed: true header); the same key with a different request is a 422; while the first request is still running, 409. 1 to 255 visible ASCII characters (a UUID is a good choice); any other value is a 422. An empty value counts as no key.',
  schema: { type: 'string', maxLength: 255, pattern: '^[\\x21-\\x7e]*$' },
} as const;

/** The scopes a key needs for `op`, every one of them; none for a public operation. */
export function requiredScopes(op: Pick<ApiOperation, 'auth'>): ApiScope[] {
  if (op.auth === false) return [];
  return typeof op.auth === 'string' ? [op.auth] : [...op.auth];
}

/** Statuses an operation can answer besides its own: authentication, rate limit, bodies, idempotency. */
function implicitErrors(op: ApiOperation): number[] {
  // 503: PostgreSQL or the Temporal server out of reach (src/http/unavailable.ts), on every operation.
  const out = [500, 503];
  if (op.auth !== false) out.push(401, 403, 429);
  // Any POST or PUT may carry a JSON body, parsed (400) and size-checked (413) before the route runs.
  if (op.method === 'post' || op.method === 'put' || op.method === 'patch') out.push(400, 413);
  if (takesIdempotencyKey(op)) out.push(409, 422);
  return out;
}

function takesIdempotencyKey(op: ApiOperation): boolean {
  return op.method === 'post' && op.auth !== false;
}

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': {
    description: "Requests allowed per minute: the key's, or its account's when that is the closer limit",
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in this minute under that limit',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time (seconds) when the window resets',
    schema: { type: 'integer' },
  },
};

function walk(value: unknown, visit: (obj: Record<string, unknown>) => void): void {
  if (Array.isArray(value)) value.forEach((v) => walk(v, visit));
  else if (value && typeof value === 'object') {
    visit(value as Record<string, unknown>);
    Object.values(value).forEach((v) => walk(v, visit));
  }
}

/**
 * Collects operations and renders the OpenAPI 3.1 document. Routers add their operations as they mount their
 * routes (see `route()`), so a route cannot exist without its description. Schemas with a `.meta({ id })` become
 * shared components.
 */
export class OpenApiRegistry {
  private readonly operations: ApiOperation[] = [];
  private readonly components: Record<string, JsonSchema> = {};
  private readonly componentSources = new Map<string, string>();
  private readonly webhooks: WebhookSpec[] = [];

  add(operation: ApiOperation): void {
    const clash = this.operations.find((o) => o.path === operation.path && o.method === operation.method);
    if (clash)
      throw new Error(`OpenAPI: ${operation.method.toUpperCase()} ${operation.path} registered twice`);
    if (this.operations.some((o) => o.operationId === operation.operationId))
      throw new Error(`OpenAPI: operationId ${operation.operationId} registered twice`);
    this.operations.push(operation);
  }

  addWebhook(webhook: WebhookSpec): void {
    if (this.webhooks.some((w) => w.event === webhook.event))
      throw new Error(`OpenAPI: webhook ${webhook.event} registered twice`);
    this.webhooks.push(webhook);
  }

  list(): readonly ApiOperation[] {
    return this.operations;
  }

  /** JSON Schema (2020-12, the dialect of OpenAPI 3.1) of a zod schema, its named parts hoisted into components. */
  schema(type: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const json = z.toJSONSchema(type, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
    delete json.$schema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    const ref = (name: string) => `#/components/schemas/${name}`;
    const rewrite = (node: unknown) =>
      walk(node, (obj) => {
        if (typeof obj.$ref === 'string' && obj.$ref.startsWith('#/$defs/'))
          obj.$ref = ref(obj.$ref.slice('#/$defs/'.length));
        // z.int() states the safe-integer range; it says nothing to a reader.
        if (obj.type === 'integer') {
          if (obj.minimum === Number.MIN_SAFE_INTEGER) delete obj.minimum;
          if (obj.maximum === Number.MAX_SAFE_INTEGER) delete obj.maximum;
        }
      });
    rewrite(json);
    for (const [name, def] of Object.entries(defs)) {
      rewrite(def);
      this.addComponent(name, def);
    }
    return json;
  }

  /**
   * Puts a named schema (`.meta({ id })`) among the components though no operation holds it: for a description
   * that names it by `$ref` only (a record whose entries the service checks one by one).
   */
  include(type: z.ZodType, io: 'input' | 'output'): void {
    this.schema(type, io);
  }

  private addComponent(name: string, schema: JsonSchema): void {
    const text = JSON.stringify(schema);
    const known = this.componentSources.get(name);
    if (known !== undefined && known !== text)
      throw new Error(`OpenAPI: two different schemas are both named ${name}`);
    this.componentSources.set(name, text);
    this.components[name] = schema;
  }

  private parameters(op: ApiOperation): JsonSchema[] {
    const out: JsonSchema[] = [];
    const add = (where: 'path' | 'query', shape: ParamsSchema | undefined) => {
      if (!shape) return;
      for (const [name, field] of Object.entries(shape.shape)) {
        const schema = this.schema(field, 'input');
        const { description, ...rest } = schema;
        out.push({
          name,
          in: where,
          required: where === 'path' || !field.safeParse(undefined).success,
          ...(typeof description === 'string' ? { description } : {}),
          schema: rest,
        });
      }
    };
    add('path', op.pathParams);
    add('query', op.query);
    if (takesIdempotencyKey(op)) out.push({ ...IDEMPOTENCY_KEY_HEADER });
    return out;
  }

  /** A link must name a registered operation and only path parameters it takes: a renamed route fails here. */
  private checkLinks(source: ApiOperation, links: Record<string, ApiLink>): void {
    for (const [name, link] of Object.entries(links)) {
      const target = this.operations.find((o) => o.operationId === link.operationId);
      const params = Object.keys(target?.pathParams?.shape ?? {});
      const unknown = Object.keys(link.parameters).filter((p) => !params.includes(p));
      if (!target || unknown.length)
        throw new Error(
          `OpenAPI: link ${name} of ${source.operationId} names ${target ? `no parameter ${unknown.join(', ')} of` : 'no operation'} ${link.operationId}`,
        );
    }
  }

  private operationObject(op: ApiOperation): JsonSchema {
    const responses: Record<string, JsonSchema> = {};
    for (const [status, spec] of Object.entries(op.responses)) {
      const content: Record<string, JsonSchema> = {};
      if (spec.schema) content['application/json'] = { schema: this.schema(spec.schema, 'output') };
      for (const [media, schema] of Object.entries(spec.content ?? {})) content[media] = { schema };
      const links = RESPONSE_LINKS[op.operationId]?.[Number(status)];
      if (links) this.checkLinks(op, links);
      responses[status] = {
        description: spec.description,
        headers: {
          'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
          ...(op.auth !== false ? RATE_LIMIT_HEADERS : {}),
          ...(spec.headers ?? {}),
        },
        ...(Object.keys(content).length ? { content } : {}),
        ...(links ? { links } : {}),
      };
    }
    const errors = new Set([...implicitErrors(op), ...(op.errors ?? [])]);
    for (const status of [...errors].sort((a, b) => a - b))
      responses[String(status)] = { $ref: `#/components/responses/E${status}` };

    const requestBody: JsonSchema | undefined = op.body && {
      required: op.body.required ?? true,
      ...(op.body.description ? { description: op.body.description } : {}),
      content: {
        ...(op.body.json ? { 'application/json': { schema: this.schema(op.body.json, 'input') } } : {}),
        ...(op.body.multipart
          ? {
              'multipart/form-data': {
                schema: this.schema(op.body.multipart, 'input'),
                encoding: {
                  file: { contentType: 'application/pdf' },
                  approvers: { contentType: 'application/json' },
                  cc: { contentType: 'application/json' },
                },
              },
            }
          : {}),
      },
    };
    return {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: op.tags,
      // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs; x-required-scopes says the same for
      // readers and tools that show only extensions.
      security: op.auth === false ? [] : [{ apiKey: requiredScopes(op) }],
      ...(op.auth === false ? {} : { 'x-required-scopes': requiredScopes(op) }),
      parameters: this.parameters(op),
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }

  /** A delivery as the receiver sees it: what a receiver answers decides retries (docs/webhooks.md). */
  private webhookObject(webhook: WebhookSpec): JsonSchema {
    return {
      post: {
        operationId: webhook.operationId,
        summary: webhook.summary,
        description: webhook.description,
        tags: ['Webhooks'],
        security: [],
        parameters: Object.entries(webhook.headers).map(([name, header]) => ({
          name,
          in: 'header',
          required: true,
          ...header,
        })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: this.schema(webhook.body, 'output') } },
        },
        responses: {
          '2XX': { description: 'Received: the delivery succeeded and is not sent again' },
          '410': { description: 'Gone: Wathiq disables the webhook and stops delivering to it' },
          default: {
            description:
              'Any other answer, a redirect, or none within the time-out: the delivery is retried on its schedule',
          },
        },
      },
    };
  }

  /** The whole OpenAPI 3.1 document. */
  document(options: { serverUrl: string; version: string }): JsonSchema {
    const paths: Record<string, Record<string, JsonSchema>> = {};
    for (const op of this.operations) (paths[op.path] ??= {})[op.method] = this.operationObject(op);
    const webhooks = Object.fromEntries(this.webhooks.map((w) => [w.event, this.webhookObject(w)]));
    const errorEnvelope = this.schema(ErrorEnvelope, 'output');
    const errorResponses: Record<string, JsonSchema> = {};
    for (const [status, description] of Object.entries(ERROR_DESCRIPTIONS)) {
      errorResponses[`E${status}`] = {
        description,
        headers: {
          'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
          ...(status === '429' || status === '503'
            ? { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer', minimum: 0 } } }
            : {}),
        },
        content: { 'application/json': { schema: errorEnvelope } },
      };
    }
    return {
      openapi: '3.1.0',
      info: {
        title: 'Wathiq API',
        version: options.version,
        description:
          'Document approvals over WhatsApp: upload a PDF with its approvers, send it, and download the digitally signed result. Every response is an envelope: {"success": true, "data": …} or {"success": false, "error": {"code", "type", "message", "details"}}; error.type names the cause.',
      },
      servers: [{ url: options.serverUrl }],
      tags: [...new Set(this.operations.flatMap((o) => o.tags))].map((name) => ({
        name,
        ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}),
      })),
      paths,
      ...(this.webhooks.length ? { webhooks } : {}),
      components: {
        schemas: Object.fromEntries(Object.entries(this.components).sort(([a], [b]) => a.localeCompare(b))),
        responses: errorResponses,
        headers: {
          'X-Request-Id': {
            description: "The request's id: the caller's X-Request-Id when it is sane, otherwise a new UUID",
            schema: { type: 'string' },
          },
        },
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'Authorization: Bearer <API_KEY>:<API_SECRET> (key and secret joined by a colon)',
          },
        },
      },
    };
  }
}
